// Once before the suite's files run (vitest.config.ts `globalSetup`).
import type { TestProject } from 'vitest/node'
import { ensureEmbeddedTemplate, ensureGatewayTemplate } from './helpers/embedded-template.js'

export default async function setup(project: TestProject): Promise<void> {
  const blank = await ensureEmbeddedTemplate()
  project.provide('embeddedTemplate', blank)
  project.provide('gatewayTemplate', await ensureGatewayTemplate(blank))
}
