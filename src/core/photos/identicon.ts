// The default profile icon (docs/api.md#objects): a 5x5 mirrored pattern and a colour, both taken
// from SHA-256 of the user ID, so every user has a distinct and stable icon.
import { createHash } from 'node:crypto'
import { encodePng } from './png.js'

const cells = 5
const cellPx = 12
const marginPx = 6
export const identiconSize = cells * cellPx + 2 * marginPx
/** The small rendition (`profile_s.png`): the same pattern and colour at a third of the size. */
export const smallIdenticonScale = 3
export const smallIdenticonSize = identiconSize / smallIdenticonScale

function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  const k = (n: number) => (n + h / 30) % 12
  const a = s * Math.min(l, 1 - l)
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)))
  return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255)]
}

/** The icon, `scale` times smaller (a divisor of every cell and margin: 1, 2, 3 or 6). */
export function identiconPng(userId: string, scale = 1): Buffer {
  const cell = cellPx / scale
  const margin = marginPx / scale
  const hash = createHash('sha256').update(`kigo identicon\n${userId}`).digest()
  const colour = hslToRgb(((hash[0]! << 8) | hash[1]!) % 360, 0.55, 0.5)
  const background: [number, number, number] = [240, 240, 240]
  // Columns 0-2 come from the hash; 3 and 4 mirror 1 and 0.
  const on = (cx: number, cy: number) => {
    const col = cx < 3 ? cx : cells - 1 - cx
    const bit = col * cells + cy
    return ((hash[2 + (bit >> 3)]! >> (bit & 7)) & 1) === 1
  }
  const size = identiconSize / scale
  return encodePng(size, size, (x, y) => {
    const cx = Math.floor((x - margin) / cell)
    const cy = Math.floor((y - margin) / cell)
    if (cx < 0 || cy < 0 || cx >= cells || cy >= cells) return background
    return on(cx, cy) ? colour : background
  })
}
