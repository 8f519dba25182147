#!/bin/bash
# LemonLDAP::NG (Debian 12's 2.16 packages) on 127.0.0.1 as an OpenID Connect provider,
# for the tests: the portal under nginx with llng-fastcgi-server, as the package's
# portal-nginx.conf sets it up, configured with lemonldap-ng-cli, the admin CLI its
# documentation names, from the package's own initial configuration.
#
#     lemonldap-ng-server.sh start STATE_DIR [--watch-pid PID] [--lifetime SECONDS]
#     lemonldap-ng-server.sh stop STATE_DIR
#     lemonldap-ng-server.sh end-sessions STATE_DIR
#
# `start` copies the package's lemonldap-ng.ini and initial configuration (lmConf-1) into
# STATE_DIR, points every storage at STATE_DIR, then sets with lemonldap-ng-cli:
# - the portal at http://127.0.0.1:PORT/ (a free port) and the Demo authentication
#   backend, the package's default (users dwho/dwho, rtyler/rtyler, msmith/msmith);
# - the OpenID Connect issuer, with an RS256 signing key made by openssl, and dynamic
#   registration (RFC 7591) on;
# - a public client `tokenctl-public`: PKCE required, offline access allowed, consent
#   left on (the default), redirect URI http://127.0.0.1:REDIRECT_PORT/ (LemonLDAP::NG
#   compares redirect URIs exactly, port included: the test sets redirect_port);
# - a confidential client `tokenctl-confidential` with a secret, allowed the client
#   credentials grant;
# - access tokens that live LEMONLDAP_ACCESS_TOKEN_SECONDS (default 60) and a portal
#   session of LEMONLDAP_SESSION_SECONDS (default 72000, the package's).
# It then starts llng-fastcgi-server and nginx, waits for discovery, writes
# STATE_DIR/server.json (issuer, ports, clients, users; the confidential client's secret
# too, so the file is 0600) and prints the issuer URL. A supervisor stops both when the
# watched process (by default the caller) is gone, after the lifetime (default 20 min),
# or on `stop`. Logs: STATE_DIR/server.log (the supervisor's, LemonLDAP::NG's at notice:
# user names and clients, never a token or password) and STATE_DIR/nginx/*.log.
#
# Run as root (CI), the portal runs as www-data, as the package runs it: STATE_DIR must
# then be reachable by www-data (a folder under /tmp is).
set -euo pipefail

readonly FASTCGI=/usr/sbin/llng-fastcgi-server
readonly CLI=/usr/share/lemonldap-ng/bin/lemonldap-ng-cli
readonly SESSIONS_CLI=/usr/share/lemonldap-ng/bin/lemonldap-ng-sessions
readonly PACKAGE_INI=/etc/lemonldap-ng/lemonldap-ng.ini
readonly PACKAGE_CONF=/var/lib/lemonldap-ng/conf/lmConf-1.json
readonly PORTAL_ROOT=/usr/share/lemonldap-ng/portal/htdocs
readonly DEFAULT_LIFETIME=1200
readonly START_TIMEOUT=60
readonly PUBLIC_CLIENT=tokenctl-public
readonly CONFIDENTIAL_CLIENT=tokenctl-confidential
SELF=$(readlink -f "$0")
readonly SELF

fail() {
  echo "lemonldap-ng-server: $*" >&2
  exit 1
}

stamp() { date +%H:%M:%S; }

usage() {
  echo "usage: lemonldap-ng-server.sh start STATE_DIR [--watch-pid PID] [--lifetime SECONDS]" >&2
  echo "       lemonldap-ng-server.sh stop STATE_DIR" >&2
  echo "       lemonldap-ng-server.sh end-sessions STATE_DIR" >&2
  exit 2
}

# The start time of process $1 (clock ticks after boot), empty when it is gone or a zombie.
start_time() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  stat=${stat##*) }
  # shellcheck disable=SC2086
  set -- $stat
  case $1 in Z | X) return 0 ;; esac
  echo "${20}"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The user the portal runs as: www-data as the package runs it when we are root (the
# FastCGI server refuses root), else ourselves.
run_user() { if [ "$(id -u)" = 0 ]; then echo www-data; else id -un; fi; }
run_group() { if [ "$(id -u)" = 0 ]; then echo www-data; else id -gn; fi; }

# lemonldap-ng-cli on our copy of the configuration. As root it drops to www-data itself
# (its --user and --group options), which owns the state.
cli() {
  LLNG_DEFAULTCONFFILE="$STATE/lemonldap-ng.ini" "$CLI" --user "$(run_user)" --group "$(run_group)" -yes 1 "$@" \
    >>"$STATE/setup.log" 2>&1 || fail "lemonldap-ng-cli $1 failed; see $STATE/setup.log:
$(tail -20 "$STATE/setup.log")"
}

configure() {
  local port=$1 redirect_port=$2 access=$3 session=$4 secret=$5
  local portal="http://127.0.0.1:$port/" issuer="http://127.0.0.1:$port"
  mkdir -p "$STATE"/{conf,cache,sessions/lock,psessions/lock,notifications,captcha,nginx/tmp}
  # The package's ini, with its two paths under STATE (it names no others).
  sed -e "s#/var/lib/lemonldap-ng/conf#$STATE/conf#" -e "s#/var/lib/lemonldap-ng/cache#$STATE/cache#" \
    -e 's#^\(\s*logLevel\s*=\).*#\1 notice#' "$PACKAGE_INI" >"$STATE/lemonldap-ng.ini"
  cp "$PACKAGE_CONF" "$STATE/conf/lmConf-1.json"
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$STATE/oidc-key.pem" 2>/dev/null
  openssl pkey -in "$STATE/oidc-key.pem" -pubout -out "$STATE/oidc-key.pub" 2>/dev/null
  if [ "$(id -u)" = 0 ]; then chown -R "$(run_user):$(run_group)" "$STATE"; fi

  # The portal, its storage, and Demo authentication (already the package's default:
  # said again so that the test does not depend on it).
  # No handler to reload here: without this, each save would call http://reload.example.com.
  cli delKey reloadUrls localhost
  cli set portal "$portal" domain 127.0.0.1 securedCookie 0 timeout "$session" \
    authentication Demo userDB Same passwordDB Demo registerDB Demo
  cli addKey globalStorageOptions Directory "$STATE/sessions" \
    globalStorageOptions LockDirectory "$STATE/sessions/lock" \
    persistentStorageOptions Directory "$STATE/psessions" \
    persistentStorageOptions LockDirectory "$STATE/psessions/lock" \
    notificationStorageOptions dirName "$STATE/notifications" \
    localSessionStorageOptions cache_root "$STATE/cache"
  # The OpenID Connect issuer (Issuer modules > OpenID Connect in the manager).
  cli set issuerDBOpenIDConnectActivation 1 oidcServiceMetaDataIssuer "$issuer" \
    oidcServicePrivateKeySig "$(cat "$STATE/oidc-key.pem")" oidcServicePublicKeySig "$(cat "$STATE/oidc-key.pub")" \
    oidcServiceKeyIdSig tokenctl-test oidcServiceAllowDynamicRegistration 1 \
    oidcServiceAllowAuthorizationCodeFlow 1
  # The relying parties (OpenID Connect Relying Parties in the manager). The exported
  # claims are those the package's documentation shows for a new RP.
  local rp
  for rp in "$PUBLIC_CLIENT" "$CONFIDENTIAL_CLIENT"; do
    cli addKey "oidcRPMetaDataExportedVars/$rp" email mail "oidcRPMetaDataExportedVars/$rp" name cn \
      "oidcRPMetaDataExportedVars/$rp" preferred_username uid \
      "oidcRPMetaDataOptions/$rp" oidcRPMetaDataOptionsClientID "$rp" \
      "oidcRPMetaDataOptions/$rp" oidcRPMetaDataOptionsAccessTokenExpiration "$access" \
      "oidcRPMetaDataOptions/$rp" oidcRPMetaDataOptionsIDTokenSignAlg RS256
  done
  cli addKey "oidcRPMetaDataOptions/$PUBLIC_CLIENT" oidcRPMetaDataOptionsPublic 1 \
    "oidcRPMetaDataOptions/$PUBLIC_CLIENT" oidcRPMetaDataOptionsRequirePKCE 1 \
    "oidcRPMetaDataOptions/$PUBLIC_CLIENT" oidcRPMetaDataOptionsAllowOffline 1 \
    "oidcRPMetaDataOptions/$PUBLIC_CLIENT" oidcRPMetaDataOptionsRedirectUris "http://127.0.0.1:$redirect_port/"
  cli addKey "oidcRPMetaDataOptions/$CONFIDENTIAL_CLIENT" oidcRPMetaDataOptionsClientSecret "$secret" \
    "oidcRPMetaDataOptions/$CONFIDENTIAL_CLIENT" oidcRPMetaDataOptionsAllowClientCredentialsGrant 1 \
    "oidcRPMetaDataOptions/$CONFIDENTIAL_CLIENT" oidcRPMetaDataOptionsRedirectUris "http://127.0.0.1:$redirect_port/"
  # Nothing of the above may leave STATE: the package's own files stay as they were.
  cat >"$STATE/nginx/nginx.conf" <<EOF
# Written by Tests/Support/lemonldap-ng-server.sh: the package's portal-nginx.conf on
# 127.0.0.1:$port, with everything nginx writes under $STATE/nginx.
$([ "$(id -u)" = 0 ] && echo "user $(run_user) $(run_group);")
worker_processes 1;
pid $STATE/nginx/nginx.pid;
error_log $STATE/nginx/error.log notice;
events { worker_connections 64; }
http {
  include /etc/nginx/mime.types;
  access_log $STATE/nginx/access.log;
  client_body_temp_path $STATE/nginx/tmp/body;
  fastcgi_temp_path $STATE/nginx/tmp/fastcgi;
  proxy_temp_path $STATE/nginx/tmp/proxy;
  uwsgi_temp_path $STATE/nginx/tmp/uwsgi;
  scgi_temp_path $STATE/nginx/tmp/scgi;
  upstream llng_portal_upstream { server unix:$STATE/llng-fastcgi.sock; }
  server {
    listen 127.0.0.1:$port;
    server_name 127.0.0.1;
    root $PORTAL_ROOT/;
    if (\$uri !~ ^/((static|javascript|favicon).*|.*\.psgi)) {
      rewrite ^/(.*)\$ /index.psgi/\$1 break;
    }
    location ~ ^(?<sc>/.*\.psgi)(?:\$|/) {
      include /etc/nginx/fastcgi_params;
      fastcgi_pass llng_portal_upstream;
      fastcgi_param HTTP_HOST \$host:\$server_port;
      fastcgi_param LLTYPE psgi;
      fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
      fastcgi_split_path_info ^(.*\.psgi)(/.*)\$;
      fastcgi_param PATH_INFO \$fastcgi_path_info;
      location ~ ^/index.psgi/(adminSessions|proxy|sessions|config|notification) {
        fastcgi_pass llng_portal_upstream;
        deny all;
      }
    }
    index index.psgi;
    location / { try_files \$uri \$uri/ =404; }
    location /static/ { alias $PORTAL_ROOT/static/; }
    location /javascript/ { alias /usr/share/javascript/; }
  }
}
EOF
  if [ "$(id -u)" = 0 ]; then chown -R "$(run_user):$(run_group)" "$STATE"; fi
}

write_json() {
  local port=$1 redirect_port=$2 access=$3 session=$4 secret=$5 pid=$6
  local tmp="$STATE/server.json.$$.tmp"
  (
    umask 077
    cat >"$tmp" <<EOF
{
  "pid": $pid,
  "issuer": "http://127.0.0.1:$port",
  "port": $port,
  "redirect_port": $redirect_port,
  "access_token_seconds": $access,
  "session_seconds": $session,
  "public_client": "$PUBLIC_CLIENT",
  "confidential_client": "$CONFIDENTIAL_CLIENT",
  "confidential_secret": "$secret",
  "users": [{"username": "dwho", "password": "dwho"}, {"username": "rtyler", "password": "rtyler"}],
  "state_dir": "$STATE",
  "log": "$STATE/server.log"
}
EOF
  )
  mv "$tmp" "$STATE/server.json"
}

# The supervisor: starts the FastCGI server and nginx, writes server.json once discovery
# answers, and stops both when told to, when the watched process is gone, or at the end
# of the lifetime. It runs in its own session (setsid), so the caller's Ctrl-C does not
# reach it; it watches the caller instead.
serve() {
  local watch_pid=$1 lifetime=$2 port=$3 redirect_port=$4 access=$5 session=$6 secret=$7
  local fastcgi_pid nginx_pid reason="" stopping=0 watch_start=""
  trap 'stopping=1' TERM INT HUP
  [ "$watch_pid" -gt 1 ] && watch_start=$(start_time "$watch_pid")
  local -a as_user=()
  if [ "$(id -u)" = 0 ]; then
    as_user=(setpriv "--reuid=$(run_user)" "--regid=$(run_group)" --init-groups)
  fi
  # The portal's own logs go to our log (Std logger: stderr), not to syslog.
  LLNG_DEFAULTCONFFILE="$STATE/lemonldap-ng.ini" LLNG_DEFAULTLOGGER=Lemonldap::NG::Common::Logger::Std \
    setsid "${as_user[@]}" "$FASTCGI" --foreground -n 2 -s "$STATE/llng-fastcgi.sock" -p "$STATE/llng-fastcgi.pid" \
    </dev/null &
  fastcgi_pid=$!
  nginx -p "$STATE/nginx" -c "$STATE/nginx/nginx.conf" -g 'daemon off;' </dev/null &
  nginx_pid=$!
  local started=$SECONDS
  until curl -fs -o /dev/null --max-time 5 "http://127.0.0.1:$port/.well-known/openid-configuration"; do
    if ! kill -0 "$fastcgi_pid" 2>/dev/null; then reason="llng-fastcgi-server exited"; break; fi
    if ! kill -0 "$nginx_pid" 2>/dev/null; then reason="nginx exited"; break; fi
    if [ $((SECONDS - started)) -gt "$START_TIMEOUT" ]; then reason="no discovery within $START_TIMEOUT s"; break; fi
    [ "$stopping" = 1 ] && { reason="signal"; break; }
    sleep 0.2
  done
  if [ -z "$reason" ]; then
    write_json "$port" "$redirect_port" "$access" "$session" "$secret" $$
    echo "$(stamp) lemonldap-ng-server: serving http://127.0.0.1:$port (supervisor $$, fastcgi $fastcgi_pid," \
      "nginx $nginx_pid, watching ${watch_pid}, lifetime $lifetime s, started in $((SECONDS - started)) s)"
    local ready=$SECONDS
    while [ -z "$reason" ]; do
      sleep 0.5 &
      wait $! || true
      if [ "$stopping" = 1 ]; then
        reason="signal"
      elif ! kill -0 "$fastcgi_pid" 2>/dev/null; then
        reason="llng-fastcgi-server exited"
      elif ! kill -0 "$nginx_pid" 2>/dev/null; then
        reason="nginx exited"
      elif [ $((SECONDS - ready)) -gt "$lifetime" ]; then
        reason="lifetime of $lifetime s reached"
      elif [ -n "$watch_start" ] && [ "$(start_time "$watch_pid")" != "$watch_start" ]; then
        reason="watched process $watch_pid is gone"
      fi
    done
  fi
  echo "$(stamp) lemonldap-ng-server: stopping: $reason"
  # The FastCGI server's workers are in its session: stop them all.
  kill -TERM "$nginx_pid" 2>/dev/null || true
  kill -TERM -- "-$fastcgi_pid" 2>/dev/null || true
  local i
  for i in $(seq 50); do
    kill -0 "$nginx_pid" 2>/dev/null || kill -0 -- "-$fastcgi_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$nginx_pid" -- "-$fastcgi_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  if [ "$(cat "$STATE/server.pid" 2>/dev/null)" = $$ ]; then rm -f "$STATE/server.json" "$STATE/server.pid"; fi
}

# Whether $1 is the supervisor of $STATE.
is_our_supervisor() {
  local pid=$1
  [ -n "$pid" ] && [ -n "$(start_time "$pid")" ] && tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qx -- _serve &&
    tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qxF -- "$STATE"
}

cmd_start() {
  local watch_pid="${LEMONLDAP_SERVER_WATCH_PID:-$PPID}" lifetime=$DEFAULT_LIFETIME
  while [ $# -gt 0 ]; do
    case $1 in
      --watch-pid) watch_pid=$2; shift 2 ;;
      --lifetime) lifetime=$2; shift 2 ;;
      *) usage ;;
    esac
  done
  [ -x "$FASTCGI" ] && [ -x "$CLI" ] && command -v nginx >/dev/null ||
    fail "LemonLDAP::NG is missing: apt-get install lemonldap-ng lemonldap-ng-fastcgi-server nginx (\`make deps\` does)"
  if [ "$watch_pid" -gt 1 ] && [ -z "$(start_time "$watch_pid")" ]; then fail "there is no process $watch_pid to watch"; fi
  mkdir -p "$STATE"
  chmod 700 "$STATE" # the signing key, the client secret and the sessions
  local old
  old=$(cat "$STATE/server.pid" 2>/dev/null || true)
  if is_our_supervisor "$old"; then fail "a server is already running for $STATE (pid $old); stop it first"; fi
  rm -f "$STATE/server.json" "$STATE/server.pid"
  if [ "$(id -u)" = 0 ] && ! setpriv --reuid=www-data --regid=www-data --clear-groups test -x "$(dirname "$STATE")"; then
    fail "www-data, as which the portal runs, cannot reach $STATE: use a folder under /tmp"
  fi

  local port redirect_port secret
  port=$(free_port)
  redirect_port=$(free_port)
  secret=$(openssl rand -hex 24)
  local access="${LEMONLDAP_ACCESS_TOKEN_SECONDS:-60}" session="${LEMONLDAP_SESSION_SECONDS:-72000}"
  : >"$STATE/setup.log"
  configure "$port" "$redirect_port" "$access" "$session" "$secret"

  local log="$STATE/server.log"
  : >>"$log"
  chmod 600 "$log"
  setsid "$SELF" _serve "$STATE" "$watch_pid" "$lifetime" "$port" "$redirect_port" "$access" "$session" "$secret" \
    </dev/null >>"$log" 2>&1 &
  local child=$!
  echo "$child" >"$STATE/server.pid"
  local deadline=$((SECONDS + START_TIMEOUT + 5))
  while :; do
    if ! kill -0 "$child" 2>/dev/null; then
      rm -f "$STATE/server.pid"
      fail "the server stopped before it answered; see $log:
$(tail -30 "$log")"
    fi
    if [ -f "$STATE/server.json" ] && grep -q "\"pid\": $child," "$STATE/server.json"; then
      echo "http://127.0.0.1:$port"
      return 0
    fi
    if [ $SECONDS -gt $deadline ]; then
      kill -TERM "$child" 2>/dev/null || true
      fail "the server did not start within $START_TIMEOUT s; see $log:
$(tail -30 "$log")"
    fi
    sleep 0.1
  done
}

cmd_stop() {
  local pid i
  pid=$(cat "$STATE/server.pid" 2>/dev/null || true)
  if is_our_supervisor "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 100); do
      is_our_supervisor "$pid" || break
      sleep 0.1
    done
  fi
  rm -f "$STATE/server.json" "$STATE/server.pid"
}

# Ends every portal (SSO) session, as an administrator does with the package's session
# CLI, or as the sessions' timeout would: offline refresh tokens are sessions of another
# kind and stay.
cmd_end_sessions() {
  [ -f "$STATE/server.json" ] || fail "no server is running for $STATE"
  local -a as_user=()
  if [ "$(id -u)" = 0 ]; then as_user=(setpriv "--reuid=$(run_user)" "--regid=$(run_group)" --init-groups); fi
  LLNG_DEFAULTCONFFILE="$STATE/lemonldap-ng.ini" "${as_user[@]}" "$SESSIONS_CLI" delete --where _session_kind=SSO \
    >>"$STATE/setup.log" 2>&1 || fail "lemonldap-ng-sessions delete failed; see $STATE/setup.log"
  local left
  left=$(LLNG_DEFAULTCONFFILE="$STATE/lemonldap-ng.ini" "${as_user[@]}" "$SESSIONS_CLI" search \
    --where _session_kind=SSO --select _session_id 2>>"$STATE/setup.log" | grep -c _session_id || true)
  [ "$left" = 0 ] || fail "$left portal sessions are left after lemonldap-ng-sessions delete"
}

[ $# -ge 2 ] || usage
command=$1
STATE=$(readlink -m "$2")
readonly STATE
shift 2
case $command in
  start) cmd_start "$@" ;;
  stop) cmd_stop ;;
  end-sessions) cmd_end_sessions ;;
  _serve) serve "$@" ;;
  *) usage ;;
esac
