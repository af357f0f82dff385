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

/* Probes read from a file, checked as dev:load's probes = {...} are (one reader, glue_read_probes):
 * PATH.json holds a JSON array of probe objects, PATH.lua is a Lua file returning the list, run in
 * a child process (killed after 5 s) in a Lua state with the base library only.  On success *probes (n of them) stay valid until
 * mh_lua_probes_free(the result); NULL on failure: io_error (the file cannot be read), bad_argument
 * (another extension, bad JSON, a Lua error, a bad probe: the message names the file and probes[N]),
 * no_memory. */
struct mh_probe;
struct mh_error;
typedef struct mh_lua_probes mh_lua_probes;
mh_lua_probes *mh_lua_probes_read(const char *path, const struct mh_probe **probes, unsigned *n, struct mh_error *e);
void mh_lua_probes_free(mh_lua_probes *p);

/* The embedded Lua sources of lua/ (generated at build time). */
typedef struct { const char *module; const char *source; unsigned long size; } mh_embedded_lua;
extern const mh_embedded_lua mh_embedded_lua_modules[];

#endif
