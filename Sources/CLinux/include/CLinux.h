#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

// The headers above are all the front end has of the C library: it is built as Embedded
// Swift (Package.swift), which has no Glibc module, and reaches libc through this one.
// sys/vfs.h is for the full program: statfs(2), which Glibc's module lacks, tells whether
// a folder is in memory (JournalPlacement).

// Linux calls Swift cannot reach through its Glibc module: those glibc declares only
// under _GNU_SOURCE, which that module is built without, and variadic ones. All exist in
// every glibc tokenctl supports (Debian 12 has 2.36).
#ifndef __USE_GNU
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
extern int pipe2(int fds[2], int flags);
#endif

// accept(2) that sets close-on-exec and non-blocking atomically: a child spawned by
// another thread between accept and fcntl would otherwise inherit the connection.
static inline int tokenctl_accept4(int fd, int flags) {
  return accept4(fd, NULL, NULL, flags);
}

// Closes every descriptor from `from` up in a spawned child (glibc 2.34), so a browser
// inherits no socket or keyring connection whoever forgot close-on-exec.
static inline int tokenctl_spawn_closefrom(posix_spawn_file_actions_t *actions, int from) {
  return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

// The uid and pid of the process at the other end of a UNIX socket (SO_PEERCRED; struct
// ucred is declared only under _GNU_SOURCE). Returns 0, or -1 with errno set.
struct tokenctl_ucred_mirror { int pid; unsigned int uid; unsigned int gid; };
static inline int tokenctl_peer_credentials(int fd, unsigned int *uid, int *pid) {
  struct tokenctl_ucred_mirror credentials;
  socklen_t length = sizeof credentials;
  if (getsockopt(fd, SOL_SOCKET, 17 /* SO_PEERCRED */, &credentials, &length) != 0) return -1;
  *uid = credentials.uid;
  *pid = credentials.pid;
  return 0;
}

// SO_PASSCRED on a listening UNIX socket, inherited by the connections it accepts: from
// then on the kernel attaches the credentials of the process that wrote each piece of
// data (SCM_CREDENTIALS), which tokenctl_recv_with_sender reads. SO_PEERCRED names the
// process that connected, which may have handed the connection to another since.
static inline int tokenctl_pass_credentials(int fd) {
  int on = 1;
  return setsockopt(fd, SOL_SOCKET, 16 /* SO_PASSCRED */, &on, sizeof on);
}

// recv(2) that also tells which process wrote the bytes received: *pid is the pid of the
// SCM_CREDENTIALS the kernel attached (it never merges the writes of two processes into
// one read), or 0 when none came. Descriptors a peer sends along are not taken: the
// control buffer has room for credentials only, and the kernel closes what does not fit.
static inline ssize_t tokenctl_recv_with_sender(int fd, void *buffer, size_t length, int *pid) {
  struct iovec vector = { buffer, length };
  union {
    struct cmsghdr header;
    char space[CMSG_SPACE(sizeof(struct tokenctl_ucred_mirror))];
  } control;
  struct msghdr message;
  memset(&message, 0, sizeof message);
  message.msg_iov = &vector;
  message.msg_iovlen = 1;
  message.msg_control = control.space;
  message.msg_controllen = sizeof control.space;
  *pid = 0;
  ssize_t received = recvmsg(fd, &message, 0x40000000 /* MSG_CMSG_CLOEXEC */);
  if (received <= 0) return received;
  for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == 2 /* SCM_CREDENTIALS */
        && header->cmsg_len == CMSG_LEN(sizeof(struct tokenctl_ucred_mirror))) {
      struct tokenctl_ucred_mirror credentials;
      memcpy(&credentials, CMSG_DATA(header), sizeof credentials);
      *pid = credentials.pid;
    }
  }
  return received;
}

// pipe(2) with close-on-exec set atomically, for the same reason as accept4.
static inline int tokenctl_pipe2(int fds[2], int flags) {
  return pipe2(fds, flags);
}

// prctl(2) is variadic, which Swift cannot call. PR_SET_DUMPABLE 0: no core dump of this
// process, and other processes of the same user may not ptrace it or read its memory,
// environment or descriptors through /proc. Reset by execve, so children are unaffected.
static inline int tokenctl_set_undumpable(void) {
  return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

// mallopt(M_PERTURB): every block malloc hands back is overwritten when freed (and filled
// when allocated). Swift's strings and arrays, GLib's buffers and libcurl's all come from
// malloc, so the copies a request makes of a token die with their memory instead of
// lingering until it is reused. 0xa5 is arbitrary but nonzero (zero turns it off).
static inline int tokenctl_wipe_freed_memory(void) {
  return mallopt(M_PERTURB, 0xa5);
}

// PR_GET_DUMPABLE and PR_SET_DUMPABLE 1: for the moment a client is identified by the
// agent, which reads its /proc/PID/exe (AgentConnection).
static inline int tokenctl_is_dumpable(void) {
  return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}
static inline int tokenctl_set_dumpable(void) {
  return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

// PR_SET_NAME: the calling thread's name (15 bytes at most), as ps -L and
// /proc/PID/task/TID/comm show it.
static inline int tokenctl_set_thread_name(const char *name) {
  return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

// A descriptor that becomes readable with ECANCELED whenever the wall clock is set or
// jumps (a step by hand or by NTP, a resume from suspend): a CLOCK_REALTIME timer armed
// for the far future with TFD_TIMER_CANCEL_ON_SET. Returns the descriptor, or -1.
static inline int tokenctl_wall_clock_watch(void) {
  int fd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC);
  if (fd < 0) return -1;
  struct itimerspec far = { .it_interval = { 0, 0 }, .it_value = { 0x7fffffff, 0 } };
  if (timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &far, NULL) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Arms it again after it reported a change (a cancelled timer stays disarmed).
static inline int tokenctl_wall_clock_rearm(int fd) {
  struct itimerspec far = { .it_interval = { 0, 0 }, .it_value = { 0x7fffffff, 0 } };
  return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &far, NULL);
}

// The width in columns of the terminal `fd` is (TIOCGWINSZ), or 0 when it is no terminal
// or reports none: as swift-argument-parser asks before it wraps help (ioctl(2) is
// variadic, which Swift cannot call).
static inline int tokenctl_terminal_columns(int fd) {
  struct winsize size;
  if (ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

// An anonymous file in memory that an exec'd program inherits (no close-on-exec): how
// the front end hands the full program what it already read (tokenctl-front-end).
// Through syscall(2): glibc declares memfd_create only under _GNU_SOURCE.
static inline int tokenctl_memfd(const char *name) {
  return (int)syscall(SYS_memfd_create, name, 0);
}

// The process's arguments as main received them, saved before main by the function below
// (glibc calls each .init_array entry with argc, argv and envp). Swift's CommandLine finds
// them by reading /proc/self/maps (51 K of the 352 K instructions the front end ran before
// it asked the agent), and Embedded Swift, which the front end is built as, has
// no CommandLine at all.
int tokenctl_argument_count(void);
char *const *tokenctl_arguments(void);

// Keeps `keep` open in a child of its own until this process ends, then ends: what
// `tokenctl ssh` leaves behind when it becomes ssh (exec), so that the agent sees its
// connection close when the session ends, not before. ssh closes every descriptor it
// did not open, so the connection cannot go with it. The child runs only system calls
// (this process may have threads), leaves the terminal's process group (a Ctrl-C for ssh
// must not end the forwarding), and waits on a pidfd of this process, or, on a kernel
// without pidfd_open, looks every 200 ms whether it was reparented. Returns the child's
// pid, or -1.
static inline int tokenctl_hold_until_exit(int keep) {
  pid_t parent = getpid();
  int watch = (int)syscall(SYS_pidfd_open, parent, 0);
  pid_t child = fork();
  if (child != 0) {
    if (watch >= 0) close(watch);
    return child;
  }
  setsid();
  for (int fd = 0; fd < 1024; fd++) {
    if (fd != keep && fd != watch) close(fd);
  }
  if (watch >= 0) {
    struct pollfd entry = {.fd = watch, .events = POLLIN, .revents = 0};
    while (poll(&entry, 1, -1) < 0 && errno == EINTR) {}
  } else {
    while (getppid() == parent) usleep(200000);
  }
  _exit(0);
}
