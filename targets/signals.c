/* SPDX-License-Identifier: MIT */
/* Signal numbers by target: Linux's generic numbering (asm-generic/signal.h, also x86,
 * arm, powerpc, s390, riscv) and MIPS's own (arch/mips/include/uapi/asm/signal.h), which
 * follows IRIX: SIGBUS 10, SIGUSR1 16, SIGCHLD 18, SIGSTOP 23, SIGSYS 12; PA-RISC's
 * (arch/parisc/include/uapi/asm/signal.h), which follows HP-UX: SIGSTKFLT 7, SIGXCPU 12,
 * SIGUSR1 16, SIGCHLD 18, SIGSTOP 24, SIGSYS 31; and the numbering sparc and alpha share,
 * SunOS's and OSF/1's (arch/{sparc,alpha}/include/uapi/asm/signal.h): SIGBUS 10, SIGURG 16,
 * SIGSTOP 17, SIGCHLD 20, SIGUSR1 30; 29 is SIGPWR (sparc's SIGLOST, alpha's SIGINFO). */
#include "target.h"

#include <string.h>

const char *const cq_signals_generic[32] = {
	NULL, "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS",
	"SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM",
	"SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN",
	"SIGTTOU", "SIGURG", "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH",
	"SIGIO", "SIGPWR", "SIGSYS"};

const char *const cq_signals_mips[32] = {
	NULL, "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGEMT",
	"SIGFPE", "SIGKILL", "SIGBUS", "SIGSEGV", "SIGSYS", "SIGPIPE", "SIGALRM",
	"SIGTERM", "SIGUSR1", "SIGUSR2", "SIGCHLD", "SIGPWR", "SIGWINCH", "SIGURG",
	"SIGIO", "SIGSTOP", "SIGTSTP", "SIGCONT", "SIGTTIN", "SIGTTOU", "SIGVTALRM",
	"SIGPROF", "SIGXCPU", "SIGXFSZ"};

const char *const cq_signals_hppa[32] = {
	NULL, "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGSTKFLT",
	"SIGFPE", "SIGKILL", "SIGBUS", "SIGSEGV", "SIGXCPU", "SIGPIPE", "SIGALRM",
	"SIGTERM", "SIGUSR1", "SIGUSR2", "SIGCHLD", "SIGPWR", "SIGVTALRM", "SIGPROF",
	"SIGIO", "SIGWINCH", "SIGSTOP", "SIGTSTP", "SIGCONT", "SIGTTIN", "SIGTTOU",
	"SIGURG", "SIGXFSZ", "SIGSYS"};

const char *const cq_signals_sparc_alpha[32] = {
	NULL, "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGEMT",
	"SIGFPE", "SIGKILL", "SIGBUS", "SIGSEGV", "SIGSYS", "SIGPIPE", "SIGALRM",
	"SIGTERM", "SIGURG", "SIGSTOP", "SIGTSTP", "SIGCONT", "SIGCHLD", "SIGTTIN",
	"SIGTTOU", "SIGIO", "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH",
	"SIGPWR", "SIGUSR1", "SIGUSR2"};

const char *cq_target_signal_name(const struct cq_target *t, int sig)
{
	const char *const *names = t && t->signals ? t->signals : cq_signals_generic;
	return sig > 0 && sig < 32 ? names[sig] : NULL;
}

int cq_target_signal_number(const struct cq_target *t, const char *name)
{
	const char *const *names = t && t->signals ? t->signals : cq_signals_generic;
	for (int i = 1; i < 32; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}
