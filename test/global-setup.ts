// Once before the suite's files run (vitest.config.ts `globalSetup`).
import type { TestProject } from 'vitest/node'
import { ensureEmbeddedTemplate } from './helpers/embedded-template.js'

export default async function setup(project: TestProject): Promise<void> {
  project.provide('embeddedTemplate', await ensureEmbeddedTemplate())
}
