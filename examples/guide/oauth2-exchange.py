#!/usr/bin/env python3
# An OAuth 1.0a application's stored tokens moved to OAuth 2.0 by the token exchange, with
# requests-oauthlib (Debian: python3-requests-oauthlib): the OAuth 1.0a signature the
# application already makes, its parameters in the form body, and the OAuth 2.0 client's
# Basic credentials. The user is not asked again. OAuth 2.0 must be on for the application
# (its page on kigo: "Turn on OAuth 2.0…", a confidential client).
#   export KIGO=http://localhost:8080 CONSUMER_KEY=… CONSUMER_SECRET=… CLIENT_ID=… CLIENT_SECRET=…
#   TOKEN=… TOKEN_SECRET=… python3 oauth2-exchange.py exchange   # one user's stored OAuth 1.0a token
#   ACCESS_TOKEN=… python3 oauth2-exchange.py post KEYWORD 'TEXT'   # Bearer, as the token's scopes allow
#   ACCESS_TOKEN=… python3 oauth2-exchange.py read ENTRY_ID
#   REFRESH_TOKEN=… python3 oauth2-exchange.py refresh               # a new access token (and refresh token)
import os
import sys

import requests
from requests.auth import AuthBase, HTTPBasicAuth
from requests_oauthlib import OAuth1, OAuth2Session
from oauthlib.oauth1 import SIGNATURE_TYPE_BODY

kigo = os.environ.get('KIGO', 'http://localhost:8080')
if kigo.startswith('http://'):
    # oauthlib insists on https; allow http for a development instance only.
    os.environ['OAUTHLIB_INSECURE_TRANSPORT'] = '1'
client_id = os.environ['CLIENT_ID']
# kigo takes the client's credentials as HTTP Basic (client_secret_basic).
client_auth = HTTPBasicAuth(client_id, os.environ['CLIENT_SECRET'])
step = sys.argv[1]


class SignedForClient(AuthBase):
    """The OAuth 1.0a signature in the form body, then the client's Basic credentials in the header."""

    def __init__(self, oauth1, basic):
        self.oauth1, self.basic = oauth1, basic

    def __call__(self, r):
        return self.basic(self.oauth1(r))


def show_tokens(token):
    for name in ('access_token', 'refresh_token', 'scope', 'expires_in'):
        print(f'{name}={token.get(name)}')


def fail(r):
    # 400 invalid_grant: the token is unknown or revoked, or the signature or nonce is wrong;
    # unauthorized_client: the token is another application's; 401 invalid_client: the client's secret.
    sys.exit(f"{r.status_code} {r.headers.get('WWW-Authenticate', '')} {r.text}")


# The token endpoint as kigo publishes it (RFC 8414): the URL the signature is made for.
metadata = requests.get(f'{kigo}/.well-known/oauth-authorization-server')
metadata.raise_for_status()
token_endpoint = metadata.json()['token_endpoint']

if step == 'exchange':
    # The same OAuth1 as for the application's API calls, with signature_type='body': the
    # Authorization header carries the client's Basic credentials. The signature covers the
    # token endpoint's URL and every body parameter; the token secret never travels, and
    # each exchange is signed afresh (a new nonce).
    oauth1 = OAuth1(os.environ['CONSUMER_KEY'], os.environ['CONSUMER_SECRET'],
                    os.environ['TOKEN'], os.environ['TOKEN_SECRET'],
                    signature_type=SIGNATURE_TYPE_BODY)
    form = {
        'grant_type': 'urn:ietf:params:oauth:grant-type:token-exchange',
        'subject_token': os.environ['TOKEN'],
        'subject_token_type': 'urn:kigo:params:oauth:token-type:oauth1-access-token',
    }
    if os.environ.get('SCOPE'):
        form['scope'] = os.environ['SCOPE']  # fewer scopes than the token has; never more
    r = requests.post(token_endpoint, data=form, auth=SignedForClient(oauth1, client_auth))
    if not r.ok:
        fail(r)
    # Store both beside the user, in place of the OAuth 1.0a token (which keeps working
    # meanwhile). Exchanging the same token again revokes this answer's grant.
    show_tokens(r.json())
elif step == 'refresh':
    # Each refresh answers a new refresh token: keep it; the old one is spent.
    session = OAuth2Session(client_id)
    token = session.refresh_token(token_endpoint, refresh_token=os.environ['REFRESH_TOKEN'],
                                  auth=client_auth)
    show_tokens(token)
else:
    # Authorization: Bearer ACCESS_TOKEN where the OAuth 1.0a signature was.
    session = OAuth2Session(client_id, token={'access_token': os.environ['ACCESS_TOKEN'],
                                              'token_type': 'Bearer'})
    if step == 'post':
        r = session.post(f'{kigo}/api/statuses/update.json',
                         data={'keyword': sys.argv[2], 'status': sys.argv[3]})
    else:
        r = session.get(f'{kigo}/api/statuses/show/{sys.argv[2]}.json')
    if not r.ok:
        # 401 invalid_token: refresh; 403 insufficient_scope: the token lacks the scope.
        fail(r)
    print(r.text)
