# A short gdb session against probe-agent, as a user would type it.
set pagination off
set confirm off
echo \n### break on the hot function, look at its argument and the caller\n
break process_order
continue
print *o
backtrace 2
info threads
echo \n### watch the global as threads update it\n
delete
python
# Some virtual machines never fire the debug registers; the agent then
# refuses hardware watchpoints, and the demo goes on without this part.
try:
    gdb.execute("watch revenue_cents")
    gdb.execute("continue")
    gdb.execute("continue")
except gdb.error as e:
    print("(skipped: %s)" % str(e).splitlines()[0])
end
delete
echo \n### trace every order without stopping the program: the agent collects\n
trace process_order
actions
collect *o, revenue_cents
end
break demo.c:45
tstart
continue
tstop
tstatus
echo \n### walk the collected frames\n
tfind start
while $trace_frame != -1
  printf "frame %d: order %d, %d x %.2f, revenue so far %ld cents\n", $trace_frame, o->id, o->quantity, o->price, revenue_cents
  tfind
end
tfind none
delete
continue
