#!/usr/bin/env python3
# kigo over OAuth 2.0 with requests-oauthlib's OAuth2Session (Debian: python3-requests-oauthlib):
# a confidential client (a server keeping CLIENT_SECRET), the authorization code with PKCE.
#   export KIGO=http://localhost:8080 CLIENT_ID=… CLIENT_SECRET=… REDIRECT_URI=http://127.0.0.1:8000/callback
#   python3 oauth2-python.py login          # prints the page to open; paste the address you land on
#   ACCESS_TOKEN=… python3 oauth2-python.py post KEYWORD 'TEXT'     # needs write_public
#   ACCESS_TOKEN=… python3 oauth2-python.py read ENTRY_ID           # needs read_public
#   REFRESH_TOKEN=… python3 oauth2-python.py refresh                 # a new access token (and refresh token)
import os
import sys

from oauthlib.oauth2 import WebApplicationClient
from requests.auth import HTTPBasicAuth
from requests_oauthlib import OAuth2Session

kigo = os.environ.get('KIGO', 'http://localhost:8080')
if kigo.startswith('http://'):
    # oauthlib insists on https; allow http for a development instance only.
    os.environ['OAUTHLIB_INSECURE_TRANSPORT'] = '1'
client_id = os.environ['CLIENT_ID']
# kigo takes the client's credentials as HTTP Basic (client_secret_basic).
client_auth = HTTPBasicAuth(client_id, os.environ['CLIENT_SECRET'])
redirect_uri = os.environ.get('REDIRECT_URI', 'http://127.0.0.1:8000/callback')
scope = os.environ.get('SCOPE', 'read_public write_public').split()
step = sys.argv[1]


def show_tokens(token):
    for name in ('access_token', 'refresh_token', 'scope', 'expires_in'):
        value = token.get(name)
        print(f"{name}={' '.join(value) if isinstance(value, list) else value}")


if step == 'login':
    # PKCE (S256): the verifier stays here, its hash goes with the user to kigo.
    client = WebApplicationClient(client_id)
    verifier = client.create_code_verifier(64)
    challenge = client.create_code_challenge(verifier, 'S256')
    session = OAuth2Session(client=client, redirect_uri=redirect_uri, scope=scope)
    url, state = session.authorization_url(f'{kigo}/oidc/auth', code_challenge=challenge,
                                           code_challenge_method='S256')
    # The user opens this page, signs in and allows; kigo then sends the browser to
    # REDIRECT_URI with ?code=…&state=…. Nothing needs to listen there: copy the address.
    print(f'authorize={url}', flush=True)
    print('Paste the address your browser was sent to:', file=sys.stderr)
    landed = sys.stdin.readline().strip()
    # fetch_token checks the state, and sends the code with the verifier.
    token = session.fetch_token(f'{kigo}/oidc/token', authorization_response=landed,
                                auth=client_auth, code_verifier=verifier)
    show_tokens(token)
elif step == 'refresh':
    # Each refresh answers a new refresh token: keep it; the old one is spent.
    session = OAuth2Session(client_id)
    token = session.refresh_token(f'{kigo}/oidc/token', refresh_token=os.environ['REFRESH_TOKEN'],
                                  auth=client_auth)
    show_tokens(token)
else:
    # Authorization: Bearer ACCESS_TOKEN on each API call.
    session = OAuth2Session(client_id, token={'access_token': os.environ['ACCESS_TOKEN'],
                                              'token_type': 'Bearer'})
    if step == 'post':
        r = session.post(f'{kigo}/api/statuses/update.json',
                         data={'keyword': sys.argv[2], 'status': sys.argv[3]})
    else:
        r = session.get(f'{kigo}/api/statuses/show/{sys.argv[2]}.json')
    if not r.ok:
        # 401 invalid_token: refresh, or log in again; 403 insufficient_scope: ask for the scope.
        sys.exit(f"{r.status_code} {r.headers.get('WWW-Authenticate', '')} {r.text}")
    print(r.text)
