// Parameter limits of statuses/update (docs/api.md#statusesupdate rule 7), configurable through
// config.core.limits. Characters are Unicode code points, not UTF-16 units.
import { errors } from '../../common/errors.js'

export interface TextLimits {
  bodyChars: number
  keywordChars: number
  sourceChars: number
}

export function countChars(text: string): number {
  let n = 0
  for (const _ of text) n += 1
  return n
}

// C0 controls, DEL and C1 controls, except tab and newline.
const forbiddenControl = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/u

export function hasForbiddenControl(text: string): boolean {
  return forbiddenControl.test(text)
}

/** A short single-line name (keyword, source): bounded length, no control characters. */
function checkName(name: 'keyword' | 'source' | 'title' | 'folder', value: string, max: number): void {
  if (countChars(value) > max) throw errors.badRequest(`${name}_too_long`, `${name} must be at most ${max} characters`)
  if (hasForbiddenControl(value)) {
    throw errors.badRequest(`invalid_${name}`, `${name} must not contain control characters other than newline and tab`)
  }
}

export function checkKeyword(keyword: string, limits: TextLimits): void {
  checkName('keyword', keyword, limits.keywordChars)
}

export function checkSource(source: string, limits: TextLimits): void {
  checkName('source', source, limits.sourceChars)
}

export function checkBody(body: string, limits: TextLimits): void {
  if (countChars(body) > limits.bodyChars) {
    throw errors.badRequest('status_too_long', `status must be at most ${limits.bodyChars} characters`)
  }
}

/** Source names the client; blank means the default `API` (docs/api.md#statusesupdate rule 4). */
export function chooseSource(source: string | undefined): string {
  const s = source?.trim() ?? ''
  return s === '' ? 'API' : s
}

/** A photo's title and folder (docs/api.md#photos): bounded, free of control characters. */
export const photoTextChars = 255

export function checkPhotoText(name: 'title' | 'folder', value: string): void {
  checkName(name, value, photoTextChars)
}
