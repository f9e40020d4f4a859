// The gateway's feature contract lives in host/feature.ts, where a feature folder may
// import it (a module never imports from a folder above its own); the central files name
// it here.
export type * from './host/feature.js'
