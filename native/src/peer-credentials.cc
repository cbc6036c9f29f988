/*
 * agent-pty: the credentials of a Unix socket's peer, for the daemon (SPEC §12: a peer of another uid
 * is refused). Node has no SO_PEERCRED. The kernel records them when the peer connects, so they name
 * the process that connected, whatever it passed the socket on to since.
 * Registered by the patched pty.cc's init as `peerCredentials`.
 */
#include <napi.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>
#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__)
#include <sys/ucred.h>
#endif

static Napi::Error ErrnoError(Napi::Env env, const char* what, int error) {
  Napi::Error failure = Napi::Error::New(env, what);
  failure.Set("errno", Napi::Number::New(env, error));
  return failure;
}

/**
 * peerCredentials(fd) -> { uid, gid, pid }: who connected to the Unix socket `fd` (`pid` is -1 where
 * the platform does not say). Throws an Error whose `errno` property is the failing errno (EBADF,
 * ENOTSOCK, ENOTCONN, ...).
 */
Napi::Value PtyPeerCredentials(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1 || !info[0].IsNumber()) {
    throw Napi::TypeError::New(env, "Usage: peerCredentials(fd)");
  }
  int fd = info[0].As<Napi::Number>().Int32Value();
  Napi::Object credentials = Napi::Object::New(env);
#if defined(SO_PEERCRED) && defined(__linux__)
  struct ucred peer;
  socklen_t length = sizeof(peer);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) == -1) {
    throw ErrnoError(env, "getsockopt(SO_PEERCRED) failed", errno);
  }
  credentials.Set("uid", Napi::Number::New(env, peer.uid));
  credentials.Set("gid", Napi::Number::New(env, peer.gid));
  credentials.Set("pid", Napi::Number::New(env, peer.pid));
#else
  uid_t uid;
  gid_t gid;
  if (getpeereid(fd, &uid, &gid) == -1) {
    throw ErrnoError(env, "getpeereid(3) failed", errno);
  }
  credentials.Set("uid", Napi::Number::New(env, uid));
  credentials.Set("gid", Napi::Number::New(env, gid));
  credentials.Set("pid", Napi::Number::New(env, -1));
#endif
  return credentials;
}
