/* SPDX-License-Identifier: MIT */
/* What a siginfo's si_code says (Linux's asm-generic/siginfo.h numbering, the same on the
 * targets coreq reads): its name, and whether it names a faulting address or a sender.
 * Signals are matched by name: MIPS numbers them differently (targets/signals.c). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"

#include "crash.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* codes a process sends with (si_code <= 0), by -code */
static const char *const si_sent[] = {"SI_USER", "SI_QUEUE", "SI_TIMER", "SI_MESGQ", "SI_ASYNCIO", "SI_SIGIO",
				      "SI_TKILL", "SI_DETHREAD"};
static const char *const ill[] = {NULL, "ILL_ILLOPC", "ILL_ILLOPN", "ILL_ILLADR", "ILL_ILLTRP", "ILL_PRVOPC",
				  "ILL_PRVREG", "ILL_COPROC", "ILL_BADSTK", "ILL_BADIADDR", "ILL_BREAK", "ILL_BNDMOD"};
static const char *const fpe[] = {NULL, "FPE_INTDIV", "FPE_INTOVF", "FPE_FLTDIV", "FPE_FLTOVF", "FPE_FLTUND",
				  "FPE_FLTRES", "FPE_FLTINV", "FPE_FLTSUB", NULL, NULL, NULL, NULL, NULL,
				  "FPE_FLTUNK", "FPE_CONDTRAP"};
static const char *const segv[] = {NULL, "SEGV_MAPERR", "SEGV_ACCERR", "SEGV_BNDERR", "SEGV_PKUERR",
				   "SEGV_ACCADI", "SEGV_ADIDERR", "SEGV_ADIPERR", "SEGV_MTEAERR", "SEGV_MTESERR",
				   "SEGV_CPERR"};
static const char *const bus[] = {NULL, "BUS_ADRALN", "BUS_ADRERR", "BUS_OBJERR", "BUS_MCEERR_AR", "BUS_MCEERR_AO"};
static const char *const trap[] = {NULL, "TRAP_BRKPT", "TRAP_TRACE", "TRAP_BRANCH", "TRAP_HWBKPT", "TRAP_UNK",
				   "TRAP_PERF"};
static const char *const chld[] = {NULL, "CLD_EXITED", "CLD_KILLED", "CLD_DUMPED", "CLD_TRAPPED", "CLD_STOPPED",
				   "CLD_CONTINUED"};
static const char *const poll[] = {NULL, "POLL_IN", "POLL_OUT", "POLL_MSG", "POLL_ERR", "POLL_PRI", "POLL_HUP"};

/* the per-signal table of signal @p name, or NULL */
static const char *const *table(const char *name, size_t *n)
{
	static const struct {
		const char *name;
		const char *const *codes;
		size_t n;
	} t[] = {{"SIGILL", ill, N(ill)},   {"SIGFPE", fpe, N(fpe)},    {"SIGSEGV", segv, N(segv)},
		 {"SIGBUS", bus, N(bus)},   {"SIGTRAP", trap, N(trap)}, {"SIGCHLD", chld, N(chld)},
		 {"SIGIO", poll, N(poll)}};
	for (size_t i = 0; name && i < N(t); i++)
		if (strcmp(t[i].name, name) == 0) {
			*n = t[i].n;
			return t[i].codes;
		}
	*n = 0;
	return NULL;
}

const char *cq_signal_code_name(const struct cq_target *tg, int sig, int code)
{
	if (code == 0x80)
		return "SI_KERNEL";
	if (code <= 0)
		return -code < (int)N(si_sent) ? si_sent[-code] : code == -60 ? "SI_ASYNCNL" : NULL;
	size_t n;
	const char *name = cq_target_signal_name(tg, sig);
	const char *const *t = table(name, &n);
	if (name && strcmp(name, "SIGSYS") == 0 && code == 1)
		return "SYS_SECCOMP";
	return t && (size_t)code < n ? t[code] : NULL;
}

enum cq_signal_origin cq_signal_origin(const struct cq_target *tg, int sig, int code)
{
	if (code <= 0)
		return CQ_SIGNAL_SENT; /* kill, tgkill, sigqueue, a timer: si_pid/si_uid */
	static const char *const faults[] = {"SIGILL", "SIGFPE", "SIGSEGV", "SIGBUS", "SIGTRAP"};
	const char *name = cq_target_signal_name(tg, sig);
	for (size_t i = 0; code != 0x80 && name && i < N(faults); i++)
		if (strcmp(name, faults[i]) == 0)
			return CQ_SIGNAL_FAULT; /* si_addr: the faulting address */
	return CQ_SIGNAL_OTHER;
}

json_t *cq_crash_json(const struct cq_core *core)
{
	if (!core->crashed || core->crash_thread >= core->nthreads)
		return NULL;
	const char *sn = cq_target_signal_name(core->target, core->signal);
	char num[24];
	snprintf(num, sizeof(num), "signal %d", core->signal);
	json_t *c = json_pack("{s:o, s:i, s:I}", "signal", cq_json_str(sn ? sn : num), "number", core->signal, "tid",
			      (json_int_t)core->threads[core->crash_thread].tid);
	/* how it came: a fault of its own code, sent by itself (abort, raise), by another
	 * process (kill: a site's way of taking cores of a hung job, or a kill of one rank), or
	 * from the kernel otherwise; without siginfo not known */
	const char *origin = "unknown";
	if (c && core->has_siginfo) {
		const char *cn = cq_signal_code_name(core->target, core->signal, core->si_code);
		if (cn)
			json_object_set_new(c, "code_name", json_string(cn));
		switch (cq_signal_origin(core->target, core->signal, core->si_code)) {
		case CQ_SIGNAL_SENT:
			json_object_set_new(c, "sender", json_pack("{s:I}", "pid", (json_int_t)core->si_pid));
			origin = (int64_t)core->si_pid == (int64_t)core->pid ? "self" : "sent";
			break;
		case CQ_SIGNAL_FAULT: origin = "fault"; break;
		default: origin = "kernel"; break;
		}
	}
	if (c)
		json_object_set_new(c, "origin", json_string(origin));
	return c;
}
