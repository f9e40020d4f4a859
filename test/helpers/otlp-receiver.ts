// A tiny OTLP/HTTP receiver (JSON encoding) for tests: it keeps every span it is sent, with
// its resource's service.name and its attributes as plain values.
import { createServer, type Server } from 'node:http'

export interface ReceivedSpan {
  service: string
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number
  attributes: Record<string, string | number | boolean>
  /** The span contexts it links to (OTLP's links: trace and span IDs). */
  links: Array<{ traceId: string; spanId: string }>
}

interface OtlpValue {
  stringValue?: string
  intValue?: string | number
  doubleValue?: number
  boolValue?: boolean
}
interface OtlpAttribute {
  key: string
  value: OtlpValue
}
interface OtlpExport {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] }
    scopeSpans?: Array<{ spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: OtlpAttribute[]; links?: Array<{ traceId: string; spanId: string }> }> }>
  }>
}

function plain(attributes: OtlpAttribute[] = []): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {}
  for (const { key, value } of attributes) {
    out[key] = value.stringValue ?? value.boolValue ?? value.doubleValue ?? Number(value.intValue)
  }
  return out
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = []
  /** Each request as it came: path and content type (the exporter's protocol). */
  readonly requests: Array<{ path: string; contentType: string }> = []

  private constructor(private readonly server: Server, readonly url: string) {}

  static async start(): Promise<OtlpReceiver> {
    const holder: { receiver?: OtlpReceiver } = {}
    const server = createServer((req, res) => {
      const receiver = holder.receiver
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        receiver!.requests.push({ path: req.url ?? '', contentType: req.headers['content-type'] ?? '' })
        if (req.url === '/v1/traces' && (req.headers['content-type'] ?? '').startsWith('application/json')) receiver!.take(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport)
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address() as { port: number }
    holder.receiver = new OtlpReceiver(server, `http://127.0.0.1:${address.port}`)
    return holder.receiver
  }

  private take(body: OtlpExport): void {
    for (const rs of body.resourceSpans ?? []) {
      const service = String(plain(rs.resource?.attributes)['service.name'] ?? '')
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({ service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, kind: s.kind, attributes: plain(s.attributes), links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })) })
        }
      }
    }
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId)
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}
