#!/usr/bin/env bash
# kigo over OAuth 2.0 with curl and jq: the device flow (RFC 8628), for a command-line tool
# that sends Basic or WSSE today. The tool never sees the password: the user approves it
# on kigo's /device page, on any device. A public client (no secret).
#   export KIGO=http://localhost:8080 CLIENT_ID=…
#   bash oauth2-device.sh login          # shows a code and an address; waits for the user
#   ACCESS_TOKEN=… bash oauth2-device.sh post KEYWORD 'TEXT'     # needs write_public
#   ACCESS_TOKEN=… bash oauth2-device.sh read ENTRY_ID           # needs read_public
#   REFRESH_TOKEN=… bash oauth2-device.sh refresh                 # a new access token (and refresh token)
#   TOKEN=… bash oauth2-device.sh revoke                          # the access or refresh token: the whole grant ends
set -euo pipefail
KIGO=${KIGO:-http://localhost:8080}
SCOPE=${SCOPE:-read_public write_public}

show_tokens() { jq -r '"access_token=\(.access_token)", "refresh_token=\(.refresh_token)", "scope=\(.scope)", "expires_in=\(.expires_in)"' <<<"$1"; }

# api METHOD PATH [curl options…]: an API call with Authorization: Bearer.
api() {
  local method=$1 path=$2 answer status; shift 2
  answer=$(curl -s -w '\n%{http_code}' -X "$method" -H "Authorization: Bearer $ACCESS_TOKEN" "$@" "$KIGO$path")
  status=${answer##*$'\n'}
  if [ "$status" != 200 ]; then
    # 401 invalid_token: refresh, or log in again; 403 insufficient_scope: ask for the scope.
    echo "$status ${answer%$'\n'*}" >&2
    exit 1
  fi
  echo "${answer%$'\n'*}"
}

case $1 in
login)
  # 1. Device authorization: a code for the user, a device_code for the tool.
  started=$(curl -sf -d "client_id=$CLIENT_ID" --data-urlencode "scope=$SCOPE" "$KIGO/oidc/device/auth")
  device_code=$(jq -r .device_code <<<"$started")
  interval=$(jq -r '.interval // 5' <<<"$started")
  # 2. Show the code and the address; the user opens it (a phone will do), signs in,
  #    types the code and allows.
  jq -r '"user_code=\(.user_code)", "verification_uri=\(.verification_uri)"' <<<"$started"
  jq -r '"Open \(.verification_uri) and type \(.user_code) (within \(.expires_in / 60 | floor) minutes)."' <<<"$started" >&2
  # 3. Poll the token endpoint every `interval` seconds until the user has answered.
  while sleep "$interval"; do
    answer=$(curl -s -d "client_id=$CLIENT_ID" -d grant_type=urn:ietf:params:oauth:grant-type:device_code \
      -d "device_code=$device_code" "$KIGO/oidc/token")
    case $(jq -r '.error // empty' <<<"$answer") in
    '') show_tokens "$answer"; exit 0 ;;
    authorization_pending) ;;
    slow_down) interval=$((interval + 5)) ;;
    *) jq -r '"refused: \(.error): \(.error_description // "")"' <<<"$answer" >&2; exit 1 ;; # access_denied, expired_token
    esac
  done
  ;;
refresh)
  # Each refresh answers a new refresh token: keep it; the old one is spent.
  answer=$(curl -s -d "client_id=$CLIENT_ID" -d grant_type=refresh_token --data-urlencode "refresh_token=$REFRESH_TOKEN" "$KIGO/oidc/token")
  if [ -n "$(jq -r '.error // empty' <<<"$answer")" ]; then echo "refused: $answer" >&2; exit 1; fi
  show_tokens "$answer"
  ;;
revoke)
  # Revoking either token of a grant ends the whole grant: its access and refresh tokens.
  curl -sf -d "client_id=$CLIENT_ID" --data-urlencode "token=$TOKEN" "$KIGO/oidc/token/revocation"
  echo revoked
  ;;
# 4. The API, the same URLs and parameters as with Basic or WSSE: only the header changes.
post) api POST /api/statuses/update.json --data-urlencode "keyword=$2" --data-urlencode "status=$3" ;;
read) api GET "/api/statuses/show/$2.json" ;;
esac
