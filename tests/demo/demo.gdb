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
watch revenue_cents
continue
continue
delete
echo \n### let the program finish\n
continue
