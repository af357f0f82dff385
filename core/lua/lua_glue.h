/* lua_glue.h - what the rest of the harness sees of the Lua side: the
 * embedded runner (core/lua/runner.c) and the sources of lua/ embedded in
 * the executable.  Everything that touches the Lua C API lives in core/lua/
 * (glue.h lists the files); `mgpu.core` is also built as a C module for a
 * stock lua5.4, LuaJIT or busted. */
#ifndef MH_LUA_GLUE_H
#define MH_LUA_GLUE_H

/* Runs a script with `arg` set as lua.c does; returns the exit status
 * (an uncaught mgpu error maps to its code's status, see error.h). */
int mh_lua_run_script(const char *path, int argc, char **argv);
const char *mh_lua_version(void);
/* Runs Lua code of the harness itself (a built-in command) with arg set. */
int mh_lua_run_builtin(const char *name, const char *code, int argc, char **argv);

/* The embedded Lua sources of lua/ (generated at build time). */
typedef struct { const char *module; const char *source; unsigned long size; } mh_embedded_lua;
extern const mh_embedded_lua mh_embedded_lua_modules[];

#endif
