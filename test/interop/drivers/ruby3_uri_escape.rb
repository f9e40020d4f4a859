# hig.rb was written for Ruby 1.8/1.9 and escapes with URI.escape, which Ruby 3.0 removed.
# Loaded with `ruby -r` before the client, this gives the old method back, delegating to the
# RFC 2396 parser that still carries it, so the client's own code runs unchanged.
require "uri"

module URI
  unless respond_to?(:escape)
    def self.escape(*args)
      DEFAULT_PARSER.escape(*args)
    end
  end
end

# The gateway logs to standard output (--debug); unbuffered, the log reaches the test as it is written.
$stdout.sync = true
