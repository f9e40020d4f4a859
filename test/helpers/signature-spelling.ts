// An identity signature spelled another way that decodes to the same digest: the last of
// its 43 base64url characters carries 258 - 256 = 2 unused bits, and flipping the lowest
// one changes the text, not the bytes.
const base64url = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

/** `t=…, v1=…` with the v1 value's last character respelled. */
export function respelledSignature(header: string): string {
  return header.slice(0, -1) + base64url[base64url.indexOf(header.at(-1)!) ^ 1]
}
