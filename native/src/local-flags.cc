/*
 * agent-pty: the termios local flags of a terminal, for the engine thread (SPEC §13: whether the
 * program on a terminal reads line by line and whether it echoes, e.g. a password prompt). Node has
 * no tcgetattr. On Linux a pty master reports the termios its slave side was set to.
 * Registered by the patched pty.cc's init as `localFlags`.
 */
#include <napi.h>
#include <errno.h>
#include <termios.h>

/**
 * localFlags(fd) -> { canonical, echo }: ICANON and ECHO of the terminal `fd` refers to.
 * Throws an Error whose `errno` property is the failing errno (EBADF, ENOTTY, ...).
 */
Napi::Value PtyLocalFlags(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1 || !info[0].IsNumber()) {
    throw Napi::TypeError::New(env, "Usage: localFlags(fd)");
  }
  int fd = info[0].As<Napi::Number>().Int32Value();
  struct termios attributes;
  if (tcgetattr(fd, &attributes) == -1) {
    int error = errno;
    Napi::Error failure = Napi::Error::New(env, "tcgetattr(3) failed");
    failure.Set("errno", Napi::Number::New(env, error));
    throw failure;
  }
  Napi::Object flags = Napi::Object::New(env);
  flags.Set("canonical", Napi::Boolean::New(env, (attributes.c_lflag & ICANON) != 0));
  flags.Set("echo", Napi::Boolean::New(env, (attributes.c_lflag & ECHO) != 0));
  return flags;
}
