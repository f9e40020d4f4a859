# Drives hatena-haiker (the client's own code, on PYTHONPATH) through every method it has,
# as its README shows: haiker.Haiker(auth) with OAuth, Basic or no credentials. Prints one
# JSON line per step with what the client returned (its parsed objects) or the error it
# raised; test/interop/haiker.test.ts asserts on them.
#
# Environment: ALICE_CONSUMER_KEY, ALICE_CONSUMER_SECRET, ALICE_TOKEN, ALICE_TOKEN_SECRET
# (OAuth), BOB_PASSWORD (bob's API password, Basic), PHOTO (a PNG file), WORD (a keyword).
import collections
import collections.abc
import json
import os
import sys
import traceback

# The client was written for Python 3.2-3.5 and uses collections.Mapping/Iterable, which
# Python 3.10 moved to collections.abc only. Restoring the old names runs it unchanged.
for _name in ('Mapping', 'Iterable'):
    if not hasattr(collections, _name):
        setattr(collections, _name, getattr(collections.abc, _name))

import haiker  # noqa: E402
from haiker.api import Haiker  # noqa: E402
from haiker.types import Keyword, Status, Target, User  # noqa: E402


def plain(o):
    """The client's objects as JSON: every slot it filled in."""
    if isinstance(o, (Status, User, Keyword, Target)):
        return {k: plain(getattr(o, k)) for k in o.__slots__}
    if isinstance(o, list):
        return [plain(x) for x in o]
    if hasattr(o, 'isoformat'):
        return o.isoformat()
    if callable(o):
        return {'unapplied_converter': getattr(o, '__name__', repr(o))}
    return o


def step(name, fn):
    try:
        value = fn()
        print(json.dumps({'step': name, 'ok': True, 'value': plain(value)}), flush=True)
        return value
    except Exception as e:  # the client wraps everything in HaikerError
        cause = getattr(e, 'causal_error', e)
        body = getattr(getattr(cause, 'response', None), 'text', '')
        print(json.dumps({'step': name, 'ok': False, 'error': '{0}: {1} {2}'.format(type(cause).__name__, cause, body[:300])}), flush=True)
        traceback.print_exc(file=sys.stderr)
        return None


env = os.environ

# The three-legged flow, in two runs (the user allows in between): `initiate` prints the
# request token and the URL to authorize; `verify` exchanges it for an access token and
# posts with it. The OAuth endpoints are the methods' `url` parameters.
if sys.argv[1:2] == ['initiate']:
    auth = haiker.OAuth(env['ALICE_CONSUMER_KEY'], env['ALICE_CONSUMER_SECRET'])
    step('OAuth.initiate', lambda: auth.initiate(['read_public', 'write_public'], url=env['KIGO'] + '/oauth/initiate'))
    step('OAuth.auth_url', lambda: auth.auth_url(url=env['KIGO'] + '/oauth/authorize'))
    sys.exit(0)
if sys.argv[1:2] == ['verify']:
    auth = haiker.OAuth(env['ALICE_CONSUMER_KEY'], env['ALICE_CONSUMER_SECRET'], env['REQUEST_TOKEN'], env['REQUEST_SECRET'])
    step('OAuth.verify', lambda: auth.verify(env['VERIFIER'], url=env['KIGO'] + '/oauth/token'))
    step('update_status with the new token', lambda: Haiker(auth).update_status(env['WORD'], 'Signed with a fresh token'))
    sys.exit(0)

word = env['WORD']
alice = Haiker(haiker.OAuth(env['ALICE_CONSUMER_KEY'], env['ALICE_CONSUMER_SECRET'], env['ALICE_TOKEN'], env['ALICE_TOKEN_SECRET']))
bob = Haiker(haiker.BasicAuth('bob', env['BOB_PASSWORD']))
anon = Haiker()
# An application's public screens: signed with its consumer key alone, no access token.
app = Haiker(haiker.OAuth(env['ALICE_CONSUMER_KEY'], env['ALICE_CONSUMER_SECRET']))

# Entries and stars
posted = step('update_status', lambda: alice.update_status(word, 'Hello from haiker', source='haiker'))
eid = posted.id if posted else '0'
step('update_status reply', lambda: bob.update_status(word, 'A reply from haiker', in_reply_to_status_id=eid, body_formats=['haiku']))
with open(env['PHOTO'], 'rb') as photo:
    step('update_status with a file', lambda: alice.update_status('photos', '', files=[photo]))
step('show_status', lambda: anon.show_status(eid, body_formats=['haiku']))
step('add_star', lambda: bob.add_star(eid))
step('remove_star', lambda: bob.remove_star(eid))

# Timelines
step('public_timeline', lambda: anon.public_timeline(count=5, body_formats=['haiku']))
step('keyword_timeline', lambda: anon.keyword_timeline(word, count=5))
step('keyword_timeline body_formats haiku,api', lambda: anon.keyword_timeline(word, body_formats=['haiku', 'api']))
step('public_timeline signed without a token', lambda: app.public_timeline(count=5))
step('user_timeline alice', lambda: anon.user_timeline('alice'))
step('user_timeline self', lambda: alice.user_timeline())
step('album', lambda: anon.album())

# Users and follows
step('follow_user', lambda: bob.follow_user('alice'))
step('friends_timeline self', lambda: bob.friends_timeline())
step('friends_timeline bob', lambda: anon.friends_timeline('bob'))
step('show_user alice', lambda: anon.show_user('alice'))
step('show_user self', lambda: bob.show_user())
step('friends bob', lambda: anon.friends('bob'))
step('followers alice', lambda: anon.followers('alice'))
step('unfollow_user', lambda: bob.unfollow_user('alice'))

# Keywords
step('show_keyword', lambda: anon.show_keyword(word))
step('hot_keywords', lambda: anon.hot_keywords())
step('keyword_list', lambda: anon.keyword_list(word=word[:5]))
step('follow_keyword', lambda: bob.follow_keyword(word))
step('favorite_keywords bob', lambda: anon.favorite_keywords('bob'))
step('unfollow_keyword', lambda: bob.unfollow_keyword(word))
step('associate_keywords', lambda: alice.associate_keywords(word, 'photos'))
step('dissociate_keywords', lambda: alice.dissociate_keywords(word, 'photos'))

# Last: alice deletes her entry.
step('delete_status', lambda: alice.delete_status(eid, 'alice'))
