#!/usr/bin/env perl
# kigo over OAuth 2.0 with LWP::Authen::OAuth2 (cpan LWP::Authen::OAuth2, or Debian's
# liblwp-authen-oauth2-perl): a public client (a program on the user's machine, no
# secret), the authorization code with PKCE.
#   export KIGO=http://localhost:8080 CLIENT_ID=… REDIRECT_URI=http://127.0.0.1:8000/callback
#   perl oauth2-perl.pl login          # prints the page to open; paste the address you land on
#   ACCESS_TOKEN=… perl oauth2-perl.pl post KEYWORD 'TEXT'     # needs write_public
#   ACCESS_TOKEN=… perl oauth2-perl.pl read ENTRY_ID           # needs read_public
#   REFRESH_TOKEN=… perl oauth2-perl.pl refresh                 # a new access token (and refresh token)
use strict;
use warnings;

# The module describes each provider by a ServiceProvider class. Its generic one sends a
# client secret in the form body, which kigo does not take; this one describes kigo for a
# public client: the client_id alone, and PKCE's code_challenge and code_verifier (the
# module passes them on; it does not compute them).
package LWP::Authen::OAuth2::ServiceProvider::Kigo {
  use parent -norequire, 'LWP::Authen::OAuth2::ServiceProvider';
  BEGIN { $INC{'LWP/Authen/OAuth2/ServiceProvider/Kigo.pm'} = __FILE__ }
  sub required_init { qw(client_id) }
  sub optional_init { qw(redirect_uri scope) }
  sub authorization_optional_params { qw(redirect_uri state scope code_challenge code_challenge_method) }
  sub request_required_params { qw(grant_type client_id code code_verifier) }
  sub request_optional_params { qw(redirect_uri) }
  sub refresh_required_params { qw(grant_type refresh_token client_id) }
}

package main;
use Digest::SHA qw(sha256);
use JSON::PP qw(encode_json);
use LWP::Authen::OAuth2;
use MIME::Base64 qw(encode_base64url);
use URI;

my $kigo = $ENV{KIGO} // 'http://localhost:8080';
my $step = shift @ARGV // '';

sub client {
  return LWP::Authen::OAuth2->new(
    service_provider => 'Kigo',
    authorization_endpoint => "$kigo/oidc/auth",
    token_endpoint => "$kigo/oidc/token",
    client_id => $ENV{CLIENT_ID},
    redirect_uri => $ENV{REDIRECT_URI} // 'http://127.0.0.1:8000/callback',
    scope => $ENV{SCOPE} // 'read_public write_public',
    @_,
  );
}

# Unguessable: from the system's random source (Perl's rand is not).
sub random_string {
  open my $random, '<:raw', '/dev/urandom' or die "/dev/urandom: $!\n";
  read($random, my $bytes, shift) or die "/dev/urandom: $!\n";
  return encode_base64url($bytes);
}

sub show {
  my $token = decode_token(shift);
  print "$_=", ($token->{$_} // ''), "\n" for qw(access_token refresh_token scope expires_in);
}

sub decode_token { JSON::PP::decode_json(shift->token_string) }

if ($step eq 'login') {
  my $oauth2 = client();
  # PKCE (S256): the verifier stays here, its hash goes with the user to kigo.
  my $verifier = random_string(48);
  my $state = random_string(24);
  my $url = $oauth2->authorization_url(state => $state, code_challenge => encode_base64url(sha256($verifier)), code_challenge_method => 'S256');
  # The user opens this page, signs in and allows; kigo then sends the browser to
  # REDIRECT_URI with ?code=…&state=…. Nothing needs to listen there: copy the address.
  $| = 1;
  print "authorize=$url\n";
  print STDERR "Paste the address your browser was sent to:\n";
  my $line = <STDIN> // '';
  $line =~ s/\s+$//;
  my %landed = URI->new($line)->query_form;
  die "kigo answered $landed{error}: ", ($landed{error_description} // ''), "\n" if $landed{error};
  die "That address is not the answer to this login (its state differs).\n" unless ($landed{state} // '') eq $state;
  $oauth2->request_tokens(code => $landed{code}, code_verifier => $verifier);
  show($oauth2);
} elsif ($step eq 'refresh') {
  # Each refresh answers a new refresh token: keep it; the old one is spent.
  my $oauth2 = client(token_string => encode_json({ _class => 'LWP::Authen::OAuth2::AccessToken::Bearer', refresh_token => $ENV{REFRESH_TOKEN} }));
  $oauth2->refresh_access_token;
  show($oauth2);
} else {
  # Authorization: Bearer ACCESS_TOKEN on each API call.
  my $oauth2 = client(token_string => encode_json({ _class => 'LWP::Authen::OAuth2::AccessToken::Bearer', access_token => $ENV{ACCESS_TOKEN}, expires_in => 3600 }));
  my $response = $step eq 'post'
    ? $oauth2->post("$kigo/api/statuses/update.json", { keyword => $ARGV[0], status => $ARGV[1] })
    : $oauth2->get("$kigo/api/statuses/show/$ARGV[0].json");
  # 401 invalid_token: refresh, or log in again; 403 insufficient_scope: ask for the scope.
  die $response->code, ' ', ($response->header('WWW-Authenticate') // ''), ' ', $response->decoded_content, "\n" unless $response->is_success;
  print $response->decoded_content, "\n";
}
