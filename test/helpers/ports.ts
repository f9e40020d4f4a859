// Ports for the servers a test starts: the benchmark's allocator, which keeps clear of the
// ephemeral range outgoing connections use.
export { freePort } from '../../bench/processes.js'
