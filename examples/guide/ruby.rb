#!/usr/bin/env ruby
# kigo over OAuth 1.0a with the oauth gem (Debian: ruby-oauth).
#   KIGO=http://localhost:8080 CONSUMER_KEY=… CONSUMER_SECRET=… ruby ruby.rb initiate
#   … REQUEST_TOKEN=… REQUEST_SECRET=… VERIFIER=… ruby ruby.rb token
#   … TOKEN=… TOKEN_SECRET=… ruby ruby.rb read ENTRY_ID
#   … TOKEN=… TOKEN_SECRET=… ruby ruby.rb post KEYWORD photo.png
require 'oauth'
require 'net/http'

kigo = ENV.fetch('KIGO', 'http://localhost:8080')
consumer = OAuth::Consumer.new(ENV.fetch('CONSUMER_KEY'), ENV.fetch('CONSUMER_SECRET'),
                               site: kigo, scheme: :header, http_method: :post,
                               request_token_path: '/oauth/initiate',
                               authorize_path: '/oauth/authorize',
                               access_token_path: '/oauth/token')

case ARGV[0]
when 'initiate'
  # Step 1: a request token, signed with the consumer credentials alone.
  rt = consumer.get_request_token(oauth_callback: ENV.fetch('CALLBACK', 'oob'))
  puts "oauth_token=#{rt.token}", "oauth_token_secret=#{rt.secret}"
  # Step 2: the user opens this page, allows, and is shown the code (oob).
  puts "authorize=#{rt.authorize_url}"
when 'token'
  # Step 3: the request token and the user's code for an access token.
  rt = OAuth::RequestToken.new(consumer, ENV.fetch('REQUEST_TOKEN'), ENV.fetch('REQUEST_SECRET'))
  at = rt.get_access_token(oauth_verifier: ENV.fetch('VERIFIER'))
  puts "oauth_token=#{at.token}", "oauth_token_secret=#{at.secret}"
when 'read'
  at = OAuth::AccessToken.new(consumer, ENV.fetch('TOKEN'), ENV.fetch('TOKEN_SECRET'))
  res = at.get("/api/statuses/show/#{ARGV[1]}.json")
  abort "#{res.code} #{res.body}" unless res.is_a?(Net::HTTPSuccess)
  puts res.body
when 'post'
  at = OAuth::AccessToken.new(consumer, ENV.fetch('TOKEN'), ENV.fetch('TOKEN_SECRET'))
  uri = URI("#{kigo}/api/statuses/update.json")
  req = Net::HTTP::Post.new(uri)
  # A multipart body's fields are not signed. The oauth gem adds oauth_body_hash (a hash
  # of the whole body) to requests that are not form-encoded, so the body is built first.
  boundary = "kigo-#{rand(10**12)}"
  req['Content-Type'] = "multipart/form-data; boundary=#{boundary}"
  req.body = ["--#{boundary}\r\nContent-Disposition: form-data; name=\"keyword\"\r\n\r\n#{ARGV[1]}\r\n",
              "--#{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"#{File.basename(ARGV[2])}\"\r\n",
              "Content-Type: application/octet-stream\r\n\r\n", File.binread(ARGV[2]), "\r\n--#{boundary}--\r\n"].map(&:b).join
  consumer.sign!(req, at)
  res = Net::HTTP.start(uri.host, uri.port, use_ssl: uri.scheme == 'https') { |http| http.request(req) }
  abort "#{res.code} #{res.body}" unless res.is_a?(Net::HTTPSuccess)
  puts res.body
end
