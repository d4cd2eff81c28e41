/**
 * Stand-ins end quietly when whoever reads their output goes away
 * (`rpm -qa | head`), as a C program killed by SIGPIPE does, instead of
 * crashing with an EPIPE stack trace.
 */
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') {
      process.exit(0);
    }
    throw error;
  });
}
