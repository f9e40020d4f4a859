// HTML escaping for text and double-quoted attribute values (HTML Living Standard §13.1.2.3).
const replacements: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => replacements[c]!)
}
