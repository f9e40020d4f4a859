#!/usr/bin/env python3
# kigo over OAuth 1.0a with requests-oauthlib (Debian: python3-requests-oauthlib).
#   KIGO=http://localhost:8080 CONSUMER_KEY=… CONSUMER_SECRET=… python3 python.py initiate
#   … REQUEST_TOKEN=… REQUEST_SECRET=… VERIFIER=… python3 python.py token
#   … TOKEN=… TOKEN_SECRET=… python3 python.py read ENTRY_ID
#   … TOKEN=… TOKEN_SECRET=… python3 python.py post KEYWORD photo.png
#   … TOKEN=… TOKEN_SECRET=… python3 python.py status KEYWORD 'TEXT'
import os
import sys
from urllib.parse import parse_qsl

import requests
from requests_oauthlib import OAuth1

kigo = os.environ.get('KIGO', 'http://localhost:8080')
key, secret = os.environ['CONSUMER_KEY'], os.environ['CONSUMER_SECRET']
step = sys.argv[1]

if step == 'initiate':
    # Step 1: a request token, signed with the consumer credentials alone.
    auth = OAuth1(key, secret, callback_uri=os.environ.get('CALLBACK', 'oob'))
    r = requests.post(f'{kigo}/oauth/initiate', auth=auth)
    r.raise_for_status()
    creds = dict(parse_qsl(r.text))
    print(f"oauth_token={creds['oauth_token']}")
    print(f"oauth_token_secret={creds['oauth_token_secret']}")
    # Step 2: the user opens this page, allows, and is shown the code (oob).
    print(f"authorize={kigo}/oauth/authorize?oauth_token={creds['oauth_token']}")
elif step == 'token':
    # Step 3: the request token and the user's code for an access token.
    auth = OAuth1(key, secret, os.environ['REQUEST_TOKEN'], os.environ['REQUEST_SECRET'], verifier=os.environ['VERIFIER'])
    r = requests.post(f'{kigo}/oauth/token', auth=auth)
    r.raise_for_status()
    creds = dict(parse_qsl(r.text))
    print(f"oauth_token={creds['oauth_token']}")
    print(f"oauth_token_secret={creds['oauth_token_secret']}")
else:
    auth = OAuth1(key, secret, os.environ['TOKEN'], os.environ['TOKEN_SECRET'])
    if step == 'read':
        r = requests.get(f'{kigo}/api/statuses/show/{sys.argv[2]}.json', auth=auth)
    elif step == 'status':
        # A text status, the case most clients have: the form body's fields are signed too.
        r = requests.post(f'{kigo}/api/statuses/update.json', auth=auth,
                          data={'keyword': sys.argv[2], 'status': sys.argv[3]})
    else:
        # A form body would be signed; a multipart body (with the photo) is not.
        with open(sys.argv[3], 'rb') as photo:
            r = requests.post(f'{kigo}/api/statuses/update.json', auth=auth,
                              data={'keyword': sys.argv[2]}, files={'file': photo})
    r.raise_for_status()
    print(r.text)
