#!/usr/bin/env bash
# kigo over OAuth 1.0a with curl; openssl computes the HMAC-SHA1 signature.
#   KIGO=http://localhost:8080 CONSUMER_KEY=… CONSUMER_SECRET=… bash curl.sh initiate
#   … REQUEST_TOKEN=… REQUEST_SECRET=… VERIFIER=… bash curl.sh token
#   … TOKEN=… TOKEN_SECRET=… bash curl.sh read ENTRY_ID
#   … TOKEN=… TOKEN_SECRET=… bash curl.sh post KEYWORD photo.png
#   … TOKEN=… TOKEN_SECRET=… bash curl.sh status KEYWORD 'TEXT'
set -euo pipefail
KIGO=${KIGO:-http://localhost:8080}

# RFC 5849 §3.6: every byte but A-Z a-z 0-9 - . _ ~ as %XX (upper case).
enc() {
  local LC_ALL=C s=$1 out='' c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in [A-Za-z0-9._~-]) out+=$c ;; *) out+=$(printf '%%%02X' "'$c") ;; esac
  done
  printf '%s' "$out"
}

# oauth_header METHOD URL TOKEN TOKEN_SECRET [name=value …]: the Authorization header.
# The extra name=value pairs are the signed ones: oauth_callback, oauth_verifier, form
# fields and query parameters (not the fields of a multipart body).
oauth_header() {
  local method=$1 url=$2 token=$3 token_secret=$4; shift 4
  local -a oauth=("oauth_consumer_key=$CONSUMER_KEY" "oauth_nonce=$(openssl rand -hex 16)"
    "oauth_signature_method=HMAC-SHA1" "oauth_timestamp=$(date +%s)" "oauth_version=1.0")
  [ -n "$token" ] && oauth+=("oauth_token=$token")
  local -a pairs=() p
  for p in "${oauth[@]}" "$@"; do pairs+=("$(enc "${p%%=*}")=$(enc "${p#*=}")"); done
  local params base signature header=''
  params=$(printf '%s\n' "${pairs[@]}" | LC_ALL=C sort -t= -k1,1 -k2 | paste -sd'&' -)
  base="$method&$(enc "${url%%\?*}")&$(enc "$params")"
  signature=$(printf '%s' "$base" | openssl dgst -sha1 -binary -hmac "$(enc "$CONSUMER_SECRET")&$(enc "$token_secret")" | base64)
  for p in "${oauth[@]}" "$@"; do
    case ${p%%=*} in oauth_*) header+="${p%%=*}=\"$(enc "${p#*=}")\", " ;; esac
  done
  printf 'Authorization: OAuth %soauth_signature="%s"' "$header" "$(enc "$signature")"
}

case $1 in
initiate)
  # Step 1: a request token, signed with the consumer credentials alone.
  url="$KIGO/oauth/initiate"
  answer=$(curl -sf -X POST -H "$(oauth_header POST "$url" '' '' "oauth_callback=${CALLBACK:-oob}")" "$url")
  tr '&' '\n' <<<"$answer" | grep '^oauth_token'
  # Step 2: the user opens this page, allows, and is shown the code (oob).
  echo "authorize=$KIGO/oauth/authorize?$(tr '&' '\n' <<<"$answer" | grep '^oauth_token=')"
  ;;
token)
  # Step 3: the request token and the user's code for an access token.
  url="$KIGO/oauth/token"
  curl -sf -X POST -H "$(oauth_header POST "$url" "$REQUEST_TOKEN" "$REQUEST_SECRET" "oauth_verifier=$VERIFIER")" "$url" | tr '&' '\n'
  echo
  ;;
read)
  url="$KIGO/api/statuses/show/$2.json"
  curl -sf -H "$(oauth_header GET "$url" "$TOKEN" "$TOKEN_SECRET")" "$url"
  echo
  ;;
status)
  # A text status, the case most clients have: the fields of a form body are signed
  # with the oauth_ parameters (RFC 5849 §3.4.1.3), and sent as the same form.
  url="$KIGO/api/statuses/update.json"
  curl -sf -H "$(oauth_header POST "$url" "$TOKEN" "$TOKEN_SECRET" "keyword=$2" "status=$3")" \
    --data-urlencode "keyword=$2" --data-urlencode "status=$3" "$url"
  echo
  ;;
post)
  # A multipart body (with the photo) is not signed: only the oauth_ parameters are.
  url="$KIGO/api/statuses/update.json"
  curl -sf -H "$(oauth_header POST "$url" "$TOKEN" "$TOKEN_SECRET")" -F "keyword=$2" -F "file=@$3" "$url"
  echo
  ;;
esac
