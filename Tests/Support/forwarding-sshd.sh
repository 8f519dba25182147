#!/bin/sh
# The remote side of tokenctl's forwarding tests and benchmark, made on this machine:
#
#     forwarding-sshd.sh DIR PORT FRONT_END
#
# writes an sshd of its own to DIR (Debian's sshd_config as shipped, plus Port PORT,
# ListenAddress 127.0.0.1, a host key and a pid file of DIR's), a client key DIR/client
# that logs in as the remote user, and the remote users themselves: tokenctl-fwd, whose
# only tokenctl is FRONT_END copied to ~/bin with its helpers' names as links (no session
# bus, no keyring, no XDG_RUNTIME_DIR), and tokenctl-fwd-other, who must not reach its
# sockets. Needs root. Then run: /usr/sbin/sshd -D -f DIR/sshd_config -E DIR/sshd.log
set -eu
dir=$1 port=$2 front_end=$3
remote=tokenctl-fwd
other=tokenctl-fwd-other
ssh-keygen -q -t ed25519 -N '' -f "$dir/host"
ssh-keygen -q -t ed25519 -N '' -f "$dir/client"
mkdir -p /run/sshd
{
  grep -v '^[[:space:]]*#' /etc/ssh/sshd_config
  echo "Port $port"
  echo 'ListenAddress 127.0.0.1'
  echo "HostKey $dir/host"
  echo "PidFile $dir/sshd.pid"
} > "$dir/sshd_config"
for user in "$remote" "$other"; do
  id "$user" > /dev/null 2>&1 || useradd -m -s /bin/sh "$user"
done
home=/home/$remote
rm -rf "$home/bin" "$home/.ssh"
mkdir -p "$home/bin" "$home/.ssh"
cp "$dir/client.pub" "$home/.ssh/authorized_keys"
cp "$front_end" "$home/bin/tokenctl"
ln -s tokenctl "$home/bin/git-credential-tokenctl"
ln -s tokenctl "$home/bin/docker-credential-tokenctl"
chown -R "$remote:" "$home/bin" "$home/.ssh"
chmod 700 "$home/.ssh"
