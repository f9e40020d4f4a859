// XML read the way clients of the original service read it (REXML, Nokogiri, SAX
// handlers): a tree of elements walked by name, never a mapping guessed from the shape.
// A list inside an object is found by taking every child element of the list's name, and
// each one's children are one item's fields (docs/api-differences.md#xml-lists).
import { XMLParser } from 'fast-xml-parser'

export interface XmlElement {
  name: string
  /** The element's own text (its text nodes joined). */
  text: string
  children: XmlElement[]
}

type Ordered = Record<string, unknown> & { ':@'?: Record<string, string> }

function toElement(node: Ordered): XmlElement | null {
  const name = Object.keys(node).find((k) => k !== ':@')
  if (name === undefined || name === '#text' || name.startsWith('?')) return null
  const kids = node[name] as Ordered[]
  const children: XmlElement[] = []
  let text = ''
  for (const kid of kids) {
    if ('#text' in kid) text += String(kid['#text'])
    else {
      const el = toElement(kid)
      if (el) children.push(el)
    }
  }
  return { name, text, children }
}

/** The document's root element. */
export function parseDocument(xml: string): XmlElement {
  const nodes = new XMLParser({ preserveOrder: true, parseTagValue: false, ignoreAttributes: false, trimValues: false }).parse(xml) as Ordered[]
  const root = nodes.map(toElement).find((e) => e !== null)
  if (!root) throw new Error('no root element')
  return root
}

/** Every child element named `name`, in document order. */
export function elements(el: XmlElement, name: string): XmlElement[] {
  return el.children.filter((c) => c.name === name)
}

/** The one child element named `name` (throws when there is none). */
export function element(el: XmlElement, name: string): XmlElement {
  const found = elements(el, name)
  if (found.length === 0) throw new Error(`<${el.name}> has no <${name}>`)
  return found[0]!
}

/** An element's leaf children as name → text (nested elements left out). */
export function fields(el: XmlElement): Record<string, string> {
  const out: Record<string, string> = {}
  for (const c of el.children) if (c.children.length === 0) out[c.name] = c.text
  return out
}
