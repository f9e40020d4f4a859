# Drives Rhaiker (the client's own lib/, on the load path) through every method it has: the
# reads without credentials and the writes (and the reads of one's own lists) with Basic and
# the user's API password. Prints one JSON line per step with what the client returned (its
# parsed hashes, or false, its answer to any non-200) or the exception it raised;
# test/interop/rhaiker.test.ts asserts on them.
#
# Arguments: alice's API password, bob's API password, a keyword.
require "json"
require "rhaiker"

def plain(o)
  case o
  when Hash then o.to_h { |k, v| [k.to_s, plain(v)] }
  when Array then o.map { |v| plain(v) }
  when URI::Generic, DateTime then o.to_s
  when REXML::Element then o.text.to_s
  else o
  end
end

def step(name)
  value = yield
  puts JSON.generate({ "step" => name, "ok" => true, "value" => plain(value) })
  value
rescue Exception => e # the client raises whatever its parsing meets
  puts JSON.generate({ "step" => name, "ok" => false, "error" => "#{e.class}: #{e.message.lines.first}" })
  warn e.full_message
  nil
ensure
  $stdout.flush
end

alice_password, bob_password, word = ARGV
def as(user, password)
  r = Rhaiker.new
  r.user_id = user
  r.api_key = password
  r
end
alice = as("alice", alice_password)
bob = as("bob", bob_password)
anon = Rhaiker.new

posted = step("status_update") { alice.status_update({ :keyword => word, :status => "Hello from Rhaiker" }) }
eid = posted ? posted[:id] : 0
step("status_update reply") { bob.status_update({ :keyword => word, :status => "A reply from Rhaiker", :in_reply_to_status_id => eid }) }
step("status_update on another keyword") { alice.status_update({ :keyword => "#{word}-2", :status => "Elsewhere" }) }
step("get_status") { anon.get_status(eid) }
step("favorites_create") { bob.favorites_create(eid) }
step("favorites_destroy") { bob.favorites_destroy(eid) }

step("get_public_timeline") { anon.get_public_timeline }
step("get_keyword_timeline") { anon.get_keyword_timeline(word, { :count => 5 }) }
step("get_user_timeline alice") { anon.get_user_timeline("alice") }
step("get_user_timeline self") { alice.get_user_timeline }
step("get_album") { anon.get_album }

step("friendship_create") { bob.friendship_create("alice") }
step("get_friends_timeline self") { bob.get_friends_timeline }
step("get_friends_timeline bob") { anon.get_friends_timeline("bob") }
step("get_friends self") { bob.get_friends }
step("get_friends bob") { anon.get_friends("bob") }
step("get_followers self") { alice.get_followers }
step("get_followers alice") { anon.get_followers("alice") }
step("get_friend") { anon.get_friend("alice") }
step("friendship_destroy") { bob.friendship_destroy("alice") }

step("keyword_create") { bob.keyword_create(word) }
step("get_keywords self") { bob.get_keywords }
step("get_keywords bob") { anon.get_keywords("bob") }
step("keyword_destroy") { bob.keyword_destroy(word) }
step("get_keyword") { anon.get_keyword(word) }
step("get_hot_keywords") { anon.get_hot_keywords }
step("get_keyword_list") { anon.get_keyword_list({ :page => 1 }) }
step("keyword_relation_create") { alice.keyword_relation_create(word, "#{word}-2") }
step("keyword_relation_destroy") { alice.keyword_relation_destroy(word, "#{word}-2") }

step("status_destroy") { alice.status_destroy(eid) }
