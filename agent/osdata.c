/*
 * osdata.c - `info os`: tables about the target system (qXfer:osdata).
 *
 * The annex names the table; an empty annex lists the tables.  Each is an
 * <osdata> document of <item>s with named <column>s.
 */
#define LOG_DOMAIN "xfer"
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"

static void osdata_types(struct rsp_buf *b)
{
	rsp_xml_osdata_begin(b, "types");
	rsp_xml_osdata_item_begin(b);
	rsp_xml_osdata_column(b, "Type", "processes");
	rsp_xml_osdata_column(b, "Description", "Listing of all processes");
	rsp_xml_osdata_column(b, "Title", "Processes");
	rsp_xml_osdata_item_end(b);
	rsp_xml_osdata_end(b);
}

static void osdata_processes(struct rsp_buf *b)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	rsp_xml_osdata_begin(b, "processes");
	while (d && (de = readdir(d))) {
		char path[300], cmd[4096], pid[32], user[64];
		struct stat st;
		ssize_t n = 0;
		int fd;

		if (!de->d_name[0] || strspn(de->d_name, "0123456789") != strlen(de->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s", de->d_name);
		if (stat(path, &st) < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		fd = open(path, O_RDONLY);
		if (fd >= 0) {
			n = read(fd, cmd, sizeof(cmd) - 1);
			close(fd);
		}
		if (n < 0)
			n = 0;
		/* Arguments are NUL-separated. */
		for (ssize_t i = 0; i < n; i++)
			if (cmd[i] == '\0')
				cmd[i] = ' ';
		while (n > 0 && cmd[n - 1] == ' ')
			n--;
		cmd[n] = '\0';
		struct passwd *pw = getpwuid(st.st_uid);
		if (pw)
			snprintf(user, sizeof(user), "%s", pw->pw_name);
		else
			snprintf(user, sizeof(user), "%u", (unsigned)st.st_uid);
		snprintf(pid, sizeof(pid), "%s", de->d_name);
		rsp_xml_osdata_item_begin(b);
		rsp_xml_osdata_column(b, "pid", pid);
		rsp_xml_osdata_column(b, "user", user);
		rsp_xml_osdata_column(b, "command", cmd);
		rsp_xml_osdata_item_end(b);
	}
	if (d)
		closedir(d);
	rsp_xml_osdata_end(b);
}

int osdata_read(const char *annex, struct rsp_buf *out)
{
	if (!annex[0])
		osdata_types(out);
	else if (strcmp(annex, "processes") == 0)
		osdata_processes(out);
	else
		return -ENOENT;
	return 0;
}
