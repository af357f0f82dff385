/* cudart_cli.h - the `nvcc` and `exec` subcommands (cudart_cli.c). */
#ifndef MH_CUDART_CLI_H
#define MH_CUDART_CLI_H
int mh_cli_nvcc(int argc, char **argv);
int mh_cli_exec(int argc, char **argv);
#endif
