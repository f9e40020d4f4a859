#!/usr/bin/env perl
# kigo over OAuth 1.0a with Net::OAuth (Debian: libnet-oauth-perl) and LWP.
#   KIGO=http://localhost:8080 CONSUMER_KEY=… CONSUMER_SECRET=… perl perl.pl initiate
#   … REQUEST_TOKEN=… REQUEST_SECRET=… VERIFIER=… perl perl.pl token
#   … TOKEN=… TOKEN_SECRET=… perl perl.pl read ENTRY_ID
#   … TOKEN=… TOKEN_SECRET=… perl perl.pl post KEYWORD photo.png
use strict;
use warnings;
use HTTP::Request::Common qw(POST GET);
use LWP::UserAgent;
use Net::OAuth;
use URI::Escape qw(uri_unescape);
$Net::OAuth::PROTOCOL_VERSION = Net::OAuth::PROTOCOL_VERSION_1_0A;

my $kigo = $ENV{KIGO} // 'http://localhost:8080';
my $ua = LWP::UserAgent->new;
my %common = (
  consumer_key => $ENV{CONSUMER_KEY}, consumer_secret => $ENV{CONSUMER_SECRET},
  signature_method => 'HMAC-SHA1', timestamp => time, nonce => join('', map { int rand 10 } 1 .. 20),
);
my $step = shift @ARGV;

sub signed {
  my ($type, $method, $url, %more) = @_;
  my $request = Net::OAuth->request($type)->new(%common, request_method => $method, request_url => $url, %more);
  $request->sign;
  return $request->to_authorization_header;
}

sub credentials {
  my ($res) = @_;
  die $res->status_line . ' ' . $res->decoded_content . "\n" unless $res->is_success;
  my %c = map { map { uri_unescape($_) } split /=/, $_, 2 } split /&/, $res->decoded_content;
  print "oauth_token=$c{oauth_token}\noauth_token_secret=$c{oauth_token_secret}\n";
  return %c;
}

if ($step eq 'initiate') {
  # Step 1: a request token, signed with the consumer credentials alone.
  my $url = "$kigo/oauth/initiate";
  my %c = credentials($ua->request(POST $url, Authorization => signed('request token', 'POST', $url, callback => $ENV{CALLBACK} // 'oob')));
  # Step 2: the user opens this page, allows, and is shown the code (oob).
  print "authorize=$kigo/oauth/authorize?oauth_token=$c{oauth_token}\n";
} elsif ($step eq 'token') {
  # Step 3: the request token and the user's code for an access token.
  my $url = "$kigo/oauth/token";
  credentials($ua->request(POST $url, Authorization => signed('access token', 'POST', $url,
    token => $ENV{REQUEST_TOKEN}, token_secret => $ENV{REQUEST_SECRET}, verifier => $ENV{VERIFIER})));
} else {
  my %token = (token => $ENV{TOKEN}, token_secret => $ENV{TOKEN_SECRET});
  my $res;
  if ($step eq 'read') {
    my $url = "$kigo/api/statuses/show/$ARGV[0].json";
    $res = $ua->request(GET $url, Authorization => signed('protected resource', 'GET', $url, %token));
  } else {
    # A multipart body (with the photo) is not signed: only the oauth_ parameters are.
    my $url = "$kigo/api/statuses/update.json";
    $res = $ua->request(POST $url, Authorization => signed('protected resource', 'POST', $url, %token),
      Content_Type => 'form-data', Content => [keyword => $ARGV[0], file => [$ARGV[1]]]);
  }
  die $res->status_line . ' ' . $res->decoded_content . "\n" unless $res->is_success;
  print $res->decoded_content, "\n";
}
