/*
 * record.h - `probe-trace record`, `probe-trace dump` and
 * `probe-trace report`.
 */
#ifndef PROBE_CLIENT_RECORD_H
#define PROBE_CLIENT_RECORD_H

int cmd_record(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif
