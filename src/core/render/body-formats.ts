// `body_formats` (docs/api.md#callback-and-body_formats): a comma-separated list naming extra fields of an Entry.
// Unknown values are ignored, as the original service did: its clients send values such
// as `api` (docs/api-differences.md#body-formats).

export const bodyFormatNames = ['haiku', 'html', 'html_touch', 'html_mobile'] as const
export type BodyFormat = (typeof bodyFormatNames)[number]

function isBodyFormat(name: string): name is BodyFormat {
  return (bodyFormatNames as readonly string[]).includes(name)
}

/** The requested known formats, deduplicated in request order; unknown values are left out. */
export function parseBodyFormats(value: string | undefined): BodyFormat[] {
  if (value === undefined) return []
  const out: BodyFormat[] = []
  for (const raw of value.split(',')) {
    const name = raw.trim()
    if (isBodyFormat(name) && !out.includes(name)) out.push(name)
  }
  return out
}
