// nginx from the operating system as a plain reverse proxy, the reference point gateway
// benchmarks usually give (docs/performance.md#the-groups-and-their-keys). One worker process, as each Node app has one
// event loop; keep-alive to the upstream; no access log. Absent when no `nginx` binary
// is installed (Debian: apt-get install nginx): the benchmark says so and reports null.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawnCommand, type AppProcess } from './processes.js'

export function findNginx(): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/local/sbin', '/usr/local/nginx/sbin']) {
    if (dir && existsSync(join(dir, 'nginx'))) return join(dir, 'nginx')
  }
  return null
}

export function nginxConfig(port: number, upstream: string, prefix: string): string {
  const u = new URL(upstream)
  return `worker_processes 1;
daemon off;
master_process on;
pid ${join(prefix, 'nginx.pid')};
error_log ${join(prefix, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${join(prefix, 'body')};
  proxy_temp_path ${join(prefix, 'proxy')};
  fastcgi_temp_path ${join(prefix, 'fastcgi')};
  uwsgi_temp_path ${join(prefix, 'uwsgi')};
  scgi_temp_path ${join(prefix, 'scgi')};
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  upstream kigo_upstream {
    server ${u.hostname}:${u.port};
    keepalive 128;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://kigo_upstream;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
    }
  }
}
`
}

/** Starts nginx on `port` in front of `upstream`, its files under `prefix`; null without nginx. */
export function startNginx(port: number, upstream: string, prefix: string): AppProcess | null {
  const binary = findNginx()
  if (!binary) return null
  mkdirSync(prefix, { recursive: true })
  const conf = join(prefix, 'nginx.conf')
  // Run as root (this machine's benchmark), nginx would hand its worker to `nobody`,
  // which cannot read a private temp directory: the worker keeps the caller's user.
  const user = process.getuid?.() === 0 ? 'user root;\n' : ''
  writeFileSync(conf, user + nginxConfig(port, upstream, prefix))
  return spawnCommand('nginx', binary, ['-p', prefix, '-c', conf], process.env)
}

/** `nginx/1.22.1`: what `nginx -v` says, for the results (never the binary's path). */
export function nginxVersion(binary: string): string {
  const said = spawnSync(binary, ['-v'], { encoding: 'utf8' })
  return /nginx\/[0-9.]+/.exec(`${said.stderr}${said.stdout}`)?.[0] ?? 'nginx'
}
