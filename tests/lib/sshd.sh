# tests/lib/sshd.sh - a private sshd on the loopback, for the tests that
# run the agent through ssh as a user does with a board.  Sourced.
#
# sshd_prepare DIR: a host key, a user key authorized for root, and a
# config on a free loopback port, all in DIR.  Sets SSHD (the daemon),
# SSHD_ARGS (its arguments: add -D to keep it in the foreground) and SSH
# (the client command that logs in, without prompts).  Returns 77 when
# not root (sshd needs root for a login) and 99 when ssh is missing.
# Sources tests/lib/common.sh (from $top_srcdir) unless the test did.

command -v tlib_free_port >/dev/null 2>&1 ||
	. "${top_srcdir:?top_srcdir must be set}/tests/lib/common.sh"

sshd_prepare() {
	local dir=$1 port
	SSHD=$(command -v sshd || echo /usr/sbin/sshd)
	if [ ! -x "$SSHD" ] || ! command -v ssh >/dev/null; then
		echo "sshd and ssh are needed (Debian: openssh-server, openssh-client)"
		return 99
	fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "# sshd needs root for a login; running as root only"
		return 77
	fi
	ssh-keygen -q -t ed25519 -N '' -f "$dir/hostkey" &&
	ssh-keygen -q -t ed25519 -N '' -f "$dir/userkey" &&
	cp "$dir/userkey.pub" "$dir/authorized_keys" || return 99
	chmod 600 "$dir/authorized_keys"
	port=$(tlib_free_port)
	cat >"$dir/sshd_config" <<CFG
Port $port
ListenAddress 127.0.0.1
HostKey $dir/hostkey
AuthorizedKeysFile $dir/authorized_keys
PidFile $dir/sshd.pid
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
MaxStartups 100
MaxSessions 100
LogLevel ERROR
CFG
	mkdir -p /run/sshd
	SSHD_ARGS="-f $dir/sshd_config -E $dir/sshd.log"
	SSH="ssh -i $dir/userkey -p $port -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR root@127.0.0.1"
}
