// `body_formats` (SPEC §2.5): a comma-separated list naming extra fields of an Entry.
import { errors } from '../../common/errors.js'

export const bodyFormatNames = ['haiku', 'html', 'html_touch', 'html_mobile'] as const
export type BodyFormat = (typeof bodyFormatNames)[number]

function isBodyFormat(name: string): name is BodyFormat {
  return (bodyFormatNames as readonly string[]).includes(name)
}

/** The requested formats, deduplicated in request order; 400 naming the allowed ones on an unknown value. */
export function parseBodyFormats(value: string | undefined): BodyFormat[] {
  if (value === undefined) return []
  const out: BodyFormat[] = []
  for (const raw of value.split(',')) {
    const name = raw.trim()
    if (name === '') continue
    if (!isBodyFormat(name)) {
      throw errors.badRequest(
        'invalid_body_formats',
        `body_formats: unknown value ${JSON.stringify(name.slice(0, 40))}; allowed: ${bodyFormatNames.join(', ')}`,
      )
    }
    if (!out.includes(name)) out.push(name)
  }
  return out
}
