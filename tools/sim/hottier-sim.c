// SPDX-License-Identifier: GPL-2.0-only
/*
 * hottier-sim: dm-hottier's own heat table, map and policy
 * (dm-hottier-heat.c, -map.c, -policy.c, compiled unmodified against
 * include/sim-kernel.h) driven by a block trace instead of bios.
 *
 * Trace mode (the default) reads one request a line on stdin:
 *
 *	<time_us> <R|W> <offset_bytes> <length_bytes>
 *
 * in time order, and does with each what the module does: a request is
 * split at extent boundaries (dm_set_target_max_io_len()); a read piece
 * goes through the stream detector and map_read()'s hit or miss
 * (dm-hottier-io.c), a write piece to a resident extent is written through
 * to the SSD (write_policy through, the default), and a write to an extent
 * being copied voids the copy (the write tracking of dm-hottier-migrate.c).
 * The promotion worker runs after every miss that asks for it and every
 * copy that ends, with at most --migrations copies in flight; a copy
 * started at t installs its replica at t + --copy-us, and reads before
 * that miss. The epoch tick and the once-a-second turnover sample run on
 * the trace's clock as do_tick() and do_sample() do. At the end it prints
 * its counters as one JSON object.
 *
 * Rig mode (--rig) takes the KUnit rig's steps instead (dm-hottier-rig-
 * test.h), one a line, for checking the simulator against the KUnit cases:
 *
 *	read E [N]	N reads of extent E (map_read() without the stream
 *			detector), default 1
 *	scan E		a read that heats nothing
 *	work		every work item the policy hands out, copied at once
 *	tick		hottier_policy_tick()
 *	resident E	prints "resident E 0|1"
 *	heat E		prints "heat E H", H the replica's heat, -1 for none
 *	stats		prints "promotions P evictions V"
 */
#include "dm-hottier-policy.h"

#include <getopt.h>
#include <inttypes.h>

unsigned long sim_warnings;

struct copy {
	struct hottier_work w;
	u64 done_us;
	bool raced;		/* written while copying: not installed */
};

struct sim {
	struct hottier_map map;
	struct hottier_policy p;
	struct hottier_seq seq;
	struct hottier_turnover turnover;

	/* The table's parameters */
	u32 slots;
	u64 tracked;
	unsigned int extent_shift;	/* sectors per extent, log2 */
	u64 cutoff_sectors;
	u32 threshold;
	u32 halflife_ms;
	u64 copy_us;
	unsigned int migrations;

	/* Copies in flight, in the order they end (one delay for all) */
	struct copy *inflight;
	unsigned int nr_inflight;

	/* The trace's clock and the target's timers on it */
	u64 now_us, tick_at_us, sample_at_us, turnover_at_us;
	u64 next_tick_us, next_sample_us;
	bool turning_over, started;

	/* Counters */
	u64 read_reqs, read_req_hits, read_pieces, read_piece_hits;
	u64 read_bytes, read_hit_bytes;
	u64 write_reqs, write_pieces, write_through_bytes;
	u64 promotions, evictions, raced, fresh_reads, fresh_hits;
	u64 ticks, turnovers, lines;
};

static void die(const char *what)
{
	fprintf(stderr, "hottier-sim: %s\n", what);
	exit(2);
}

static u64 extent_bytes(const struct sim *s)
{
	return 512ULL << s->extent_shift;
}

static u64 epoch_us(const struct sim *s)
{
	return (u64)s->halflife_ms * 1000 / HOTTIER_EPOCHS_PER_HALFLIFE;
}

/*
 * Under @extent's bucket lock, taken here (*@lock): the slot of @extent if
 * it is in the index in @state, else HOTTIER_NIL.
 */
static u32 lock_find(struct sim *s, u64 extent, unsigned int state,
		     struct hottier_mlock **lock, unsigned long *flags)
{
	u32 slot;

	*lock = hottier_map_lock(&s->map, extent, flags);
	slot = __hottier_map_find(&s->map, extent);
	if (slot != HOTTIER_NIL &&
	    hottier_mslot_state(hottier_mslot(&s->map, slot)) != state)
		slot = HOTTIER_NIL;
	return slot;
}

static u32 find_in(struct sim *s, u64 extent, unsigned int state)
{
	struct hottier_mlock *lock;
	unsigned long flags;
	u32 slot = lock_find(s, extent, state, &lock, &flags);

	hottier_map_unlock(lock, flags);
	return slot;
}

/*
 * A read of one extent, as map_read() does it (not degraded): a hit heats
 * the slot unless the stream detector says the read heats nothing; a miss
 * is offered to the policy. True: a hit. *@kick: the policy wants work.
 */
static bool read_extent(struct sim *s, u64 extent, bool heats, bool *kick)
{
	struct hottier_mlock *lock;
	unsigned long flags;
	u32 slot = lock_find(s, extent, HOTTIER_S_RESIDENT, &lock, &flags);

	if (slot != HOTTIER_NIL) {
		if (heats)
			__hottier_policy_hit(&s->p, slot);
		hottier_map_unlock(lock, flags);
		return true;
	}
	hottier_map_unlock(lock, flags);
	*kick = hottier_policy_miss(&s->p, extent, !heats);
	return false;
}

/* hottier_replica_evict(): the eviction a work item asks for, if it may. */
static bool replica_evict(struct sim *s, struct hottier_work *w)
{
	struct hottier_mlock *lock;
	unsigned long flags;
	bool ok;

	lock = hottier_map_lock(&s->map, w->victim, &flags);
	ok = __hottier_map_evictable(&s->map, w->slot, w->victim);
	if (ok) {
		__hottier_policy_removing(&s->p, w->slot);
		__hottier_map_remove(&s->map, w->slot);
	}
	hottier_map_unlock(lock, flags);
	hottier_policy_evicted(&s->p, w, ok);
	return ok;
}

/* hottier_replica_start(): the extent goes into the index, COPYING. */
static void replica_start(struct sim *s, struct hottier_work *w)
{
	struct hottier_mlock *lock;
	unsigned long flags;

	lock = hottier_map_lock(&s->map, w->extent, &flags);
	__hottier_map_insert(&s->map, w->slot, w->extent);
	hottier_map_unlock(lock, flags);
	hottier_policy_start(&s->p, w);
}

/* hottier_replica_done(): installed if @ok, else out of the index. */
static void replica_done(struct sim *s, struct hottier_work *w, bool ok)
{
	struct hottier_mlock *lock;
	unsigned long flags;

	hottier_policy_done(&s->p, w, ok);
	lock = hottier_map_lock(&s->map, w->extent, &flags);
	if (ok) {
		if (w->pinned)
			__hottier_policy_set_pinned(&s->p, w->slot, true);
		__hottier_map_install(&s->map, w->slot, w->heat,
				      hottier_policy_epoch(&s->p));
		__hottier_policy_installed(&s->p, w->slot);
	} else {
		__hottier_policy_removing(&s->p, w->slot);
		__hottier_map_remove(&s->map, w->slot);
	}
	hottier_map_unlock(lock, flags);
	if (!ok)
		hottier_map_put(&s->map, w->slot);
}

static void copy_done(struct sim *s, struct copy *c)
{
	replica_done(s, &c->w, !c->raced);
	if (c->raced)
		s->raced++;
	else
		s->promotions++;
}

/*
 * The promotion worker (do_promote()): new work items while fewer than
 * @limit copies are in flight. A copy of no delay ends at once.
 */
static void promote(struct sim *s, unsigned int limit)
{
	struct hottier_work w;
	unsigned int again = 0;
	struct copy *c;
	int r;

	while (s->nr_inflight < limit) {
		r = hottier_policy_next(&s->p, &w);
		if (r == -EAGAIN && ++again < 1000000)
			continue;
		if (r)
			return;
		if (w.evict && !replica_evict(s, &w))
			continue;
		s->evictions += w.evict;
		replica_start(s, &w);
		c = &s->inflight[s->nr_inflight++];
		c->w = w;
		c->raced = false;
		c->done_us = s->now_us + s->copy_us;
		if (!s->copy_us) {
			s->nr_inflight--;
			copy_done(s, c);
		}
	}
}

/* The first copy in flight has ended. */
static void end_first_copy(struct sim *s)
{
	struct copy c = s->inflight[0];

	memmove(&s->inflight[0], &s->inflight[1],
		--s->nr_inflight * sizeof(c));
	copy_done(s, &c);
	promote(s, s->migrations);
}

/* do_tick() */
static void tick(struct sim *s)
{
	hottier_policy_tick(&s->p);
	s->ticks++;
	s->tick_at_us = s->now_us;
	s->turning_over = false;
	s->next_tick_us = s->now_us + epoch_us(s);
}

/* do_sample(): the turnover detector's sample of the fresh reads. */
static void sample(struct sim *s)
{
	u32 elapsed = (s->now_us - s->sample_at_us) / 1000;

	if (hottier_turnover_sample(&s->turnover, s->fresh_hits,
				    s->fresh_reads, elapsed, s->halflife_ms,
				    s->turning_over)) {
		hottier_policy_turnover(&s->p);
		s->tick_at_us = s->now_us;
		s->turnover_at_us = s->now_us;
		s->turning_over = true;
		s->next_tick_us = s->now_us + epoch_us(s);
		s->turnovers++;
	} else if (s->turning_over) {
		s->turning_over = hottier_policy_turnover_second(&s->p,
				(s->now_us - s->turnover_at_us) / 1000,
				s->halflife_ms);
	}
	s->sample_at_us = s->now_us;
	s->next_sample_us = s->now_us + 1000000;
}

/* Run the clock to @t: copies ending, ticks and samples, in time order. */
static void advance(struct sim *s, u64 t)
{
	u64 next;

	if (!s->started) {
		s->started = true;
		s->now_us = t;
		s->tick_at_us = s->sample_at_us = t;
		s->next_tick_us = t + epoch_us(s);
		s->next_sample_us = t + 1000000;
		return;
	}
	for (;;) {
		next = min(s->next_tick_us, s->next_sample_us);
		if (s->nr_inflight)
			next = min(next, s->inflight[0].done_us);
		if (next > t)
			break;
		s->now_us = max(s->now_us, next);
		if (s->nr_inflight && s->inflight[0].done_us == next)
			end_first_copy(s);
		else if (s->next_tick_us == next)
			tick(s);
		else
			sample(s);
	}
	s->now_us = max(s->now_us, t);
}

static void do_read(struct sim *s, u64 offset, u64 len)
{
	u64 sector = offset >> 9, end = (offset + len + 511) >> 9;
	u64 per = 1ULL << s->extent_shift, piece;
	bool all = true, kick, heats, fresh, hit;

	s->read_reqs++;
	while (sector < end) {
		piece = min(end, (sector | (per - 1)) + 1) - sector;
		heats = hottier_seq_read(&s->seq, sector, piece,
					 s->cutoff_sectors, s->extent_shift,
					 &fresh);
		kick = false;
		hit = read_extent(s, sector >> s->extent_shift, heats, &kick);
		s->read_pieces++;
		s->read_bytes += piece << 9;
		s->fresh_reads += fresh;
		if (hit) {
			s->read_piece_hits++;
			s->read_hit_bytes += piece << 9;
			s->fresh_hits += fresh;
		}
		all &= hit;
		if (kick)
			promote(s, s->migrations);
		sector += piece;
	}
	s->read_req_hits += all;
}

static void do_write(struct sim *s, u64 offset, u64 len)
{
	u64 sector = offset >> 9, end = (offset + len + 511) >> 9;
	u64 per = 1ULL << s->extent_shift, piece, extent;
	unsigned int i;

	s->write_reqs++;
	while (sector < end) {
		piece = min(end, (sector | (per - 1)) + 1) - sector;
		extent = sector >> s->extent_shift;
		s->write_pieces++;
		if (find_in(s, extent, HOTTIER_S_RESIDENT) != HOTTIER_NIL)
			s->write_through_bytes += piece << 9;
		for (i = 0; i < s->nr_inflight; i++)
			if (s->inflight[i].w.extent == extent)
				s->inflight[i].raced = true;
		sector += piece;
	}
}

static void report(struct sim *s)
{
	u64 written = s->promotions * extent_bytes(s) + s->write_through_bytes;

	printf("{\"slots\": %" PRIu32 ", \"tracked\": %" PRIu64
	       ", \"extent_bytes\": %" PRIu64 ", \"copy_us\": %" PRIu64
	       ", \"read_reqs\": %" PRIu64 ", \"read_req_hits\": %" PRIu64
	       ", \"read_pieces\": %" PRIu64 ", \"read_piece_hits\": %" PRIu64
	       ", \"read_bytes\": %" PRIu64 ", \"read_hit_bytes\": %" PRIu64
	       ", \"write_reqs\": %" PRIu64 ", \"write_pieces\": %" PRIu64
	       ", \"write_through_bytes\": %" PRIu64
	       ", \"promotions\": %" PRIu64 ", \"evictions\": %" PRIu64
	       ", \"raced\": %" PRIu64 ", \"ssd_bytes_written\": %" PRIu64
	       ", \"ticks\": %" PRIu64 ", \"turnovers\": %" PRIu64
	       ", \"resident\": %d, \"warnings\": %lu}\n",
	       s->slots, s->tracked, extent_bytes(s), s->copy_us,
	       s->read_reqs, s->read_req_hits, s->read_pieces,
	       s->read_piece_hits, s->read_bytes, s->read_hit_bytes,
	       s->write_reqs, s->write_pieces, s->write_through_bytes,
	       s->promotions, s->evictions, s->raced, written, s->ticks,
	       s->turnovers, atomic_read(&s->map.resident), sim_warnings);
}

static void trace_mode(struct sim *s)
{
	char line[256], op;
	unsigned long long t, off, len;

	while (fgets(line, sizeof(line), stdin)) {
		s->lines++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%llu %c %llu %llu", &t, &op, &off, &len) != 4)
			die("bad line: want <time_us> <R|W> <offset> <length>");
		if (!len)
			continue;
		advance(s, t);
		if (op == 'R')
			do_read(s, off, len);
		else if (op == 'W')
			do_write(s, off, len);
		else
			die("bad op: want R or W");
	}
	/* Copies in flight at the end are not counted: none installed. */
	report(s);
}

static void rig_mode(struct sim *s)
{
	char line[256], cmd[16];
	unsigned long long e, n;
	bool kick;
	int k;
	u32 slot;

	while (fgets(line, sizeof(line), stdin)) {
		n = 1;
		k = sscanf(line, "%15s %llu %llu", cmd, &e, &n);
		if (k < 1 || cmd[0] == '#')
			continue;
		if (!strcmp(cmd, "read") && k >= 2) {
			while (n--)
				read_extent(s, e, true, &kick);
		} else if (!strcmp(cmd, "scan") && k >= 2) {
			read_extent(s, e, false, &kick);
		} else if (!strcmp(cmd, "work")) {
			promote(s, 1);
		} else if (!strcmp(cmd, "tick")) {
			hottier_policy_tick(&s->p);
		} else if (!strcmp(cmd, "resident") && k >= 2) {
			printf("resident %llu %d\n", e,
			       find_in(s, e, HOTTIER_S_RESIDENT) != HOTTIER_NIL);
		} else if (!strcmp(cmd, "heat") && k >= 2) {
			slot = find_in(s, e, HOTTIER_S_RESIDENT);
			printf("heat %llu %lld\n", e, slot == HOTTIER_NIL ? -1LL :
			       (long long)hottier_mslot_heat(hottier_mslot(&s->map, slot),
							     hottier_policy_epoch(&s->p)));
		} else if (!strcmp(cmd, "stats")) {
			printf("promotions %" PRIu64 " evictions %" PRIu64 "\n",
			       s->promotions, s->evictions);
		} else {
			die("bad rig step");
		}
		fflush(stdout);
	}
}

static void usage(void)
{
	fputs("usage: hottier-sim --slots N [--tracked N] [--extent-kb K]\n"
	      "       [--threshold R] [--halflife-ms MS] [--cutoff-kb K]\n"
	      "       [--copy-us US] [--migrations N] [--rig] < events\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "slots", required_argument, NULL, 's' },
		{ "tracked", required_argument, NULL, 't' },
		{ "extent-kb", required_argument, NULL, 'e' },
		{ "threshold", required_argument, NULL, 'r' },
		{ "halflife-ms", required_argument, NULL, 'h' },
		{ "cutoff-kb", required_argument, NULL, 'c' },
		{ "copy-us", required_argument, NULL, 'd' },
		{ "migrations", required_argument, NULL, 'm' },
		{ "rig", no_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	/* The table's defaults (dm-hottier-args.c) and a 1 MiB extent. */
	struct sim *s = calloc(1, sizeof(*s));
	u64 extent_kb = 1024;
	bool rig = false;
	int c;

	if (!s)
		die("out of memory");
	s->threshold = 4;
	s->halflife_ms = 60000;
	s->cutoff_sectors = 4096 * 2;
	s->migrations = 4;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': s->slots = strtoul(optarg, NULL, 0); break;
		case 't': s->tracked = strtoull(optarg, NULL, 0); break;
		case 'e': extent_kb = strtoull(optarg, NULL, 0); break;
		case 'r': s->threshold = strtoul(optarg, NULL, 0); break;
		case 'h': s->halflife_ms = strtoul(optarg, NULL, 0); break;
		case 'c': s->cutoff_sectors = strtoull(optarg, NULL, 0) * 2; break;
		case 'd': s->copy_us = strtoull(optarg, NULL, 0); break;
		case 'm': s->migrations = strtoul(optarg, NULL, 0); break;
		case 'g': rig = true; break;
		default: usage();
		}
	}
	if (!s->slots || !s->migrations || !s->halflife_ms ||
	    extent_kb < 4 || !is_power_of_2(extent_kb))
		usage();
	s->extent_shift = ilog2(extent_kb * 2);
	/* hottier_max_tracked(): max_tracked 0 is a slot's worth, >= 16. */
	if (!s->tracked)
		s->tracked = max_t(u64, s->slots, 16);
	s->inflight = calloc(s->migrations, sizeof(*s->inflight));
	if (!s->inflight || hottier_map_init(&s->map, s->slots) ||
	    hottier_policy_init(&s->p, &s->map, s->tracked))
		die("cannot build the map and policy");
	hottier_policy_set_threshold(&s->p, s->threshold);
	hottier_seq_init(&s->seq);
	hottier_turnover_init(&s->turnover);
	if (rig)
		rig_mode(s);
	else
		trace_mode(s);
	hottier_policy_exit(&s->p);
	hottier_map_exit(&s->map);
	return sim_warnings ? 1 : 0;
}
