# SPDX-License-Identifier: GPL-2.0
# make demo's plot: each QP's goodput at the sink, every 100 ms, in the
# incast of selftests/cbfc_incast.sh: cbfc, pfifo, and cbfc with the
# PE1 - P link going down a third of the way (failover.t: that second,
# on the same clock).
#   gnuplot -e "dir='build/demo'; rate=4" tools/demo/incast.gp
set terminal pngcairo size 2000,560 font ",11"
set output dir."/incast.png"
set multiplot layout 1,3 title sprintf("Incast: 4 senders through PE1 - P - PE2 to a %g Mbit/s bottleneck, goodput per QP at the sink", rate)
set xlabel "seconds since the first packet"
set ylabel "Mbit/s (100 ms bins)"
set yrange [0:rate * 1.1]
set key top right
set grid
do for [q in "cbfc pfifo failover"] {
	unset arrow
	unset label
	if (q eq "cbfc") {
		set title "cbfc with credit returns on every hop: 0 lost"
	}
	if (q eq "pfifo") {
		set title "pfifo, tbf bottleneck: the queue overflows"
	}
	if (q eq "failover") {
		set title "cbfc, PE1 - P link down: PE1 fails over to the backup via bp"
		t = real(system("cat ".dir."/failover.t 2>/dev/null || echo -1"))
		if (t >= 0) {
			set arrow from t, 0 to t, rate * 1.1 nohead lw 2 dt 3 lc "red"
			set label sprintf(" link down, failover (%.2f s)", t) at t, rate * 0.1 tc "red"
		}
	}
	plot for [i = 2:5] dir."/".q.".dat" using 1:i with lines lw 2 title sprintf("QP %d", 255 + i), \
		rate / 4.0 with lines dt 2 lc "gray" title "fair share"
}
unset multiplot
