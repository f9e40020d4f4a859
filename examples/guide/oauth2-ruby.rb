#!/usr/bin/env ruby
# kigo over OAuth 2.0 with the oauth2 gem (gem install oauth2, or Debian's ruby-oauth2):
# a confidential client (a server keeping CLIENT_SECRET), the authorization code with PKCE.
#   export KIGO=http://localhost:8080 CLIENT_ID=… CLIENT_SECRET=… REDIRECT_URI=http://127.0.0.1:8000/callback
#   ruby oauth2-ruby.rb login          # prints the page to open; paste the address you land on
#   ACCESS_TOKEN=… ruby oauth2-ruby.rb post KEYWORD 'TEXT'     # needs write_public
#   ACCESS_TOKEN=… ruby oauth2-ruby.rb read ENTRY_ID           # needs read_public
#   REFRESH_TOKEN=… ruby oauth2-ruby.rb refresh                 # a new access token (and refresh token)
require 'base64'
require 'digest'
require 'oauth2'
require 'securerandom'
require 'uri'

kigo = ENV.fetch('KIGO', 'http://localhost:8080')
redirect_uri = ENV.fetch('REDIRECT_URI', 'http://127.0.0.1:8000/callback')
scope = ENV.fetch('SCOPE', 'read_public write_public')
# kigo takes the client's credentials as HTTP Basic (client_secret_basic).
client = OAuth2::Client.new(ENV.fetch('CLIENT_ID'), ENV.fetch('CLIENT_SECRET'),
                            site: kigo, authorize_url: '/oidc/auth', token_url: '/oidc/token',
                            auth_scheme: :basic_auth)

def show(token)
  puts "access_token=#{token.token}", "refresh_token=#{token.refresh_token}",
       "scope=#{token.params['scope']}", "expires_in=#{token.expires_in}"
end

case ARGV[0]
when 'login'
  # PKCE (S256), computed here: the verifier stays, its hash goes with the user to kigo.
  verifier = SecureRandom.urlsafe_base64(48)
  challenge = Base64.urlsafe_encode64(Digest::SHA256.digest(verifier), padding: false)
  state = SecureRandom.urlsafe_base64(24)
  url = client.auth_code.authorize_url(redirect_uri: redirect_uri, scope: scope, state: state,
                                       code_challenge: challenge, code_challenge_method: 'S256')
  # The user opens this page, signs in and allows; kigo then sends the browser to
  # REDIRECT_URI with ?code=…&state=…. Nothing needs to listen there: copy the address.
  puts "authorize=#{url}"
  $stdout.flush
  warn 'Paste the address your browser was sent to:'
  landed = URI.decode_www_form(URI($stdin.gets.strip).query.to_s).to_h
  abort "kigo answered #{landed['error']}: #{landed['error_description']}" if landed['error']
  abort 'That address is not the answer to this login (its state differs).' unless landed['state'] == state
  show client.auth_code.get_token(landed['code'], redirect_uri: redirect_uri, code_verifier: verifier)
when 'refresh'
  # Each refresh answers a new refresh token: keep it; the old one is spent.
  show OAuth2::AccessToken.new(client, '', refresh_token: ENV.fetch('REFRESH_TOKEN')).refresh!
else
  # Authorization: Bearer ACCESS_TOKEN on each API call.
  token = OAuth2::AccessToken.new(client, ENV.fetch('ACCESS_TOKEN'))
  begin
    response = if ARGV[0] == 'post'
                 token.post('/api/statuses/update.json', body: { keyword: ARGV[1], status: ARGV[2] })
               else
                 token.get("/api/statuses/show/#{ARGV[1]}.json")
               end
    puts response.body
  rescue OAuth2::Error => e
    # 401 invalid_token: refresh, or log in again; 403 insufficient_scope: ask for the scope.
    abort "#{e.response.status} #{e.response.headers['www-authenticate']} #{e.response.body}"
  end
end
