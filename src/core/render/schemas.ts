// The JSON shapes of docs/api.md#objects and docs/api.md#photos as TypeBox schemas: the contract the renderers
// keep, checked by the tests.
import { Type, type Static } from '../../common/typebox.js'

const Digits = Type.String({ pattern: '^[0-9]+$' })
const Timestamp = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' })
const NoneOr = <T extends Type.TSchema>(t: T) => Type.Union([t, Type.Literal(0)])

export const UserJson = Type.Object({
  id: Type.String(),
  name: Type.String(),
  screen_name: Type.String(),
  followers_count: Type.Integer({ minimum: 0 }),
  profile_image_url: Type.String({ pattern: '^https?://[^/]+/users/[^/]+/profile\\.png$' }),
  url: Type.String({ pattern: '^https?://[^/]+/[^/]+/$' }),
}, { additionalProperties: false })

const entryFields = {
  id: Digits,
  created_at: Timestamp,
  favorited: Type.Union([Type.Literal(0), Type.Literal(1)]),
  in_reply_to_status_id: NoneOr(Digits),
  in_reply_to_user_id: NoneOr(Type.String({ minLength: 1 })),
  keyword: Type.String(),
  link: Type.String({ pattern: '^https?://[^/]+/[^/]+/[0-9]+$' }),
  source: Type.String(),
  /** The keyword posted to, as the original service gave it. */
  target: Type.Object({ title: Type.String(), word: Type.String(), url_name: Type.Optional(Type.String()) }, { additionalProperties: false }),
  text: Type.String(),
  user: UserJson,
  haiku_text: Type.Optional(Type.String()),
  html: Type.Optional(Type.String()),
  html_touch: Type.Optional(Type.String()),
  html_mobile: Type.Optional(Type.String()),
}

/** An Entry; on a timeline or statuses/show with its `replies`, each an Entry without its own. */
export const EntryJson = Type.Object({
  ...entryFields,
  replies: Type.Optional(Type.Array(Type.Object(entryFields, { additionalProperties: false }))),
}, { additionalProperties: false })

export const PhotoJson = Type.Object({
  id: Digits,
  url: Type.String(),
  image_url: Type.String({ pattern: '^https?://[^/]+/photos/[^/]+/[0-9]+\\.(jpg|png|gif|webp)$' }),
  title: Type.String(),
  folder: Type.String(),
  source: Type.String(),
  created_at: Timestamp,
  user: UserJson,
}, { additionalProperties: false })

export type EntryJson = Static<typeof EntryJson>
export type PhotoJson = Static<typeof PhotoJson>
