// A section of the developer guide (/developers) that a feature adds: the guide is the
// host's page, the sections come from the features (host/feature.ts).
import type { SafeHtml } from '../../common/html.js'

/**
 * A section of the developer guide (/developers): its anchor and table-of-contents title,
 * and its body for the deployment at `base` (scheme and host, as the page is served).
 */
export interface GuideSection {
  id: string
  title: string
  render: (base: string) => SafeHtml
}

/** The URL the guide's sample files are written for; the page shows the deployment's instead. */
export const sampleBaseUrl = 'http://localhost:8080'
