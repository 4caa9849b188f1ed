# fetch-debs.sh - sourced: fetch_debs DIR DEBARCH PKG... keeps the newest
# Debian .deb of each PKG:DEBARCH in DIR.
#
# The file name apt would give (pkg_version_arch.deb) comes from
# `apt-get download --print-uris`; a deb already there is not fetched
# again, and older versions of the same package are removed (a glob over
# two versions would unpack both).  When apt cannot answer (no package
# lists, no network) a deb already cached is used as it is.

fetch_debs() {
	_dir=$1 _arch=$2
	shift 2
	for _p in "$@"; do
		_name=$(cd "$_dir" && apt-get download --print-uris "$_p:$_arch" 2>/dev/null |
			awk '{ print $2 }' | head -n 1) || _name=
		if [ -z "$_name" ]; then
			if ls "$_dir/${_p}"_*.deb >/dev/null 2>&1; then
				continue
			fi
			echo "fetch-debs: cannot find $_p:$_arch (dpkg --add-architecture $_arch; apt-get update)" >&2
			return 1
		fi
		[ -f "$_dir/$_name" ] && continue
		rm -f "$_dir/${_p}"_*.deb
		(cd "$_dir" && apt-get download -q -o APT::Sandbox::User=root "$_p:$_arch" >/dev/null) ||
			{ echo "fetch-debs: apt-get download $_p:$_arch failed" >&2; return 1; }
	done
}
