# SPDX-License-Identifier: GPL-2.0
# make demo's plot: each QP's goodput at the sink, every 100 ms, in the
# incast of selftests/cbfc_incast.sh, cbfc beside pfifo.
#   gnuplot -e "dir='build/demo'; rate=10" tools/demo/incast.gp
set terminal pngcairo size 1400,520 font ",11"
set output dir."/incast.png"
set multiplot layout 1,2 title sprintf("Incast: 4 senders through PE1 - P - PE2 to a %g Mbit/s bottleneck, goodput per QP at the sink", rate)
set xlabel "seconds since the first packet"
set ylabel "Mbit/s (100 ms bins)"
set yrange [0:rate * 1.1]
set key top right
set grid
do for [q in "cbfc pfifo"] {
	set title (q eq "cbfc" ? "cbfc with credit returns on every hop: 0 lost" : "pfifo, tbf bottleneck: the queue overflows")
	plot for [i = 2:5] dir."/".q.".dat" using 1:i with lines lw 2 title sprintf("QP %d", 255 + i), \
		rate / 4.0 with lines dt 2 lc "gray" title "fair share"
}
unset multiplot
