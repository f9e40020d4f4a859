// Drives HatenaHaiku4J (the client's own classes, compiled beside this file) through every
// method of its API classes: HatenaHaikuAPILight (no credentials) and HatenaHaikuAPI (Basic,
// with the user's API password). Prints one JSON line per step with what the client
// returned (its parsed objects) or the exception it threw; test/interop/hatenahaiku4j.test.ts
// asserts on them.
//
// Arguments: alice's API password, bob's API password, a PNG file, a keyword, an image URL.
import hatenahaiku4j.HatenaHaikuAPI;
import hatenahaiku4j.HatenaHaikuAPILight;
import hatenahaiku4j.ImageExt;
import hatenahaiku4j.Keyword;
import hatenahaiku4j.LoginUser;
import hatenahaiku4j.Status;
import hatenahaiku4j.User;

import java.io.File;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.Callable;

public class RunHatenaHaiku4J {
	static String q(String s) {
		if (s == null) return "null";
		StringBuilder b = new StringBuilder("\"");
		for (char c : s.toCharArray()) {
			if (c == '"' || c == '\\') b.append('\\').append(c);
			else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
			else b.append(c);
		}
		return b.append('"').toString();
	}

	static String json(Object o) {
		if (o == null) return "null";
		if (o instanceof String) return q((String) o);
		if (o instanceof Number || o instanceof Boolean) return o.toString();
		if (o instanceof List) {
			StringBuilder b = new StringBuilder("[");
			for (Object e : (List<?>) o) b.append(b.length() > 1 ? "," : "").append(json(e));
			return b.append(']').toString();
		}
		if (o instanceof Status) {
			Status s = (Status) o;
			return "{\"id\":" + q(s.getStatusId()) + ",\"created_at\":" + q(s.getCreatedAt() == null ? null : String.valueOf(s.getCreatedAt().getTime()))
				+ ",\"favorited\":" + s.getFavorited() + ",\"in_reply_to_status_id\":" + q(s.getInReplyToStatusId())
				+ ",\"in_reply_to_user_id\":" + q(s.getInReplyToUserId()) + ",\"keyword\":" + q(s.getKeyword())
				+ ",\"link\":" + q(s.getLink()) + ",\"source\":" + q(s.getSource()) + ",\"text\":" + q(s.getText())
				+ ",\"user\":" + json(s.getUser()) + ",\"replies\":" + json(s.getReplies()) + "}";
		}
		if (o instanceof User) {
			User u = (User) o;
			return "{\"id\":" + q(u.getUserId()) + ",\"name\":" + q(u.getName()) + ",\"screen_name\":" + q(u.getScreenName())
				+ ",\"followers_count\":" + u.getFollowersCount() + ",\"profile_image_url\":" + q(u.getProfileImageUrl()) + "}";
		}
		if (o instanceof Keyword) {
			Keyword k = (Keyword) o;
			return "{\"title\":" + q(k.getTitle()) + ",\"entry_count\":" + k.getEntryCount() + ",\"followers_count\":" + k.getFollowersCount()
				+ ",\"link\":" + q(k.getLink()) + ",\"related_keywords\":" + json(k.getRelatedKeywords()) + "}";
		}
		return q(o.toString());
	}

	static <T> T step(String name, Callable<T> call) {
		try {
			T value = call.call();
			System.out.println("{\"step\":" + q(name) + ",\"ok\":true,\"value\":" + json(value) + "}");
			return value;
		} catch (Throwable e) {
			StringBuilder why = new StringBuilder();
			for (Throwable t = e; t != null; t = t.getCause()) why.append(why.length() > 0 ? " <- " : "").append(t);
			System.out.println("{\"step\":" + q(name) + ",\"ok\":false,\"error\":" + q(why.toString()) + "}");
			e.printStackTrace();
			return null;
		} finally {
			System.out.flush();
		}
	}

	public static void main(String[] args) throws Exception {
		final String word = args[3], imageUrl = args[4];
		final byte[] png = Files.readAllBytes(new File(args[2]).toPath());
		final File photo = new File(args[2]);
		final HatenaHaikuAPILight anon = new HatenaHaikuAPILight();
		final HatenaHaikuAPI alice = new HatenaHaikuAPI(new LoginUser("alice", args[0], "hatenahaiku4j"));
		final HatenaHaikuAPI bob = new HatenaHaikuAPI(new LoginUser("bob", args[1]));

		// Entries (statuses/update in each of its spellings) and stars
		Status posted = step("entry", () -> alice.entry(word, "Hello from HatenaHaiku4J"));
		final String eid = posted == null ? "0" : posted.getStatusId();
		step("entry on the id page", () -> alice.entry("On my own page"));
		step("entry with a file", () -> alice.entry("photos", "", photo));
		step("entry with an image URL", () -> alice.entry("photos", "", imageUrl));
		step("entry with image data", () -> alice.entry("photos", "", png, ImageExt.PNG));
		step("reply", () -> bob.reply(eid, "A reply from HatenaHaiku4J"));
		step("reply with a file", () -> bob.reply(eid, "", photo));
		step("reply with an image URL", () -> bob.reply(eid, "", imageUrl));
		step("reply with image data", () -> bob.reply(eid, "", png, ImageExt.PNG));
		step("getStatus", () -> anon.getStatus(eid));
		step("addStar", () -> bob.addStar(eid));
		step("deleteStar", () -> bob.deleteStar(eid));

		// Timelines
		step("getPublicTimeline", () -> anon.getPublicTimeline());
		step("getKeywordTimeline", () -> anon.getKeywordTimeline(word));
		step("getHotKeywordTimeline", () -> anon.getHotKeywordTimeline(word));
		step("getUserTimeline alice", () -> anon.getUserTimeline("alice"));
		step("getUserTimeline self", () -> alice.getUserTimeline());
		step("getHotUserTimeline alice", () -> anon.getHotUserTimeline("alice"));
		step("getHotUserTimeline self", () -> alice.getHotUserTimeline());
		step("getIdTimeline alice", () -> anon.getIdTimeline("alice"));
		step("getIdTimeline self", () -> alice.getIdTimeline());
		step("getAlbumTimeline", () -> anon.getAlbumTimeline());
		step("getAlbumKeywordTimeline", () -> anon.getAlbumKeywordTimeline("photos"));

		// Users and follows
		step("followUser", () -> bob.followUser("alice"));
		step("getFriendsTimeline self", () -> bob.getFriendsTimeline());
		step("getFriendsTimeline bob", () -> anon.getFriendsTimeline("bob"));
		step("getFollowingList self", () -> bob.getFollowingList());
		step("getFollowingList bob", () -> anon.getFollowingList("bob"));
		step("getFollowersList self", () -> alice.getFollowersList());
		step("getFollowersList alice", () -> anon.getFollowersList("alice"));
		step("getUser", () -> anon.getUser("alice"));
		step("getMe", () -> bob.getMe());
		step("unfollowUser", () -> bob.unfollowUser("alice"));

		// Keywords
		step("getKeyword", () -> anon.getKeyword(word));
		step("getMyKeyword", () -> alice.getMyKeyword());
		step("getHotKeywordList", () -> anon.getHotKeywordList());
		step("getKeywordList", () -> anon.getKeywordList());
		step("getKeywordList search", () -> anon.getKeywordList(word.substring(0, 5), 1));
		step("followKeyword", () -> bob.followKeyword(word));
		step("getFollowingKeywordList self", () -> bob.getFollowingKeywordList());
		step("getFollowingKeywordList bob", () -> anon.getFollowingKeywordList("bob"));
		step("unfollowKeyword", () -> bob.unfollowKeyword(word));
		step("relateKeyword", () -> alice.relateKeyword(word, "photos"));
		step("unrelateKeyword", () -> alice.unrelateKeyword(word, "photos"));

		step("deleteEntry", () -> alice.deleteEntry(eid));
	}
}
