package io.pgqueue.benchmark;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Draws the balancer simulation's runs as one SVG: a panel per scenario with the Gini index of the
 * shard loads (blue, left scale) and the moves so far (orange, right scale) over time.
 */
final class SimulationPlot {

    private static final int WIDTH = 720;

    private static final int PANEL = 150;

    private static final int LEFT = 60;

    private static final int RIGHT = 60;

    private static final double GINI_SCALE = 0.4;

    private SimulationPlot() {
    }

    static String svg(Map<String, BalancerSimulation.Run> runs) {
        int height = runs.size() * (PANEL + 40) + 20;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"11\">%n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n",
                WIDTH, height));
        int top = 20;
        for (BalancerSimulation.Run run : runs.values()) {
            panel(svg, run, top);
            top += PANEL + 40;
        }
        return svg.append("</svg>\n").toString();
    }

    private static void panel(StringBuilder svg, BalancerSimulation.Run run, int top) {
        List<BalancerSimulation.Point> points = run.points();
        double seconds = Math.max(1, points.get(points.size() - 1).seconds());
        int moves = Math.max(1, run.moves());
        int plot = WIDTH - LEFT - RIGHT;
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s: %d moves, Gini %.3f → %.3f"
                + "</text>%n", LEFT, top - 5, run.name(), run.moves(), points.get(0).gini(), run.finalGini()));
        svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                + "stroke=\"#999\"/>%n", LEFT, top, plot, PANEL));
        for (double gini : new double[] { 0.05, 0.15 }) {
            double y = top + PANEL - gini / GINI_SCALE * PANEL;
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#1f77b4\" "
                    + "stroke-dasharray=\"4 3\" stroke-opacity=\"0.5\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" "
                    + "fill=\"#1f77b4\">%.2f</text>%n", LEFT, LEFT + plot, y, y, LEFT - 4, y + 4, gini));
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"start\" fill=\"#ff7f0e\">%d</text>%n",
                LEFT + plot + 4, top + 10, run.moves()));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.1f h</text>%n",
                LEFT + plot, top + PANEL + 14, seconds / 3600));
        StringBuilder gini = new StringBuilder();
        StringBuilder moved = new StringBuilder();
        int step = Math.max(1, points.size() / 360);
        for (int i = 0; i < points.size(); i += step) {
            BalancerSimulation.Point point = points.get(Math.min(points.size() - 1, i + step - 1));
            double x = LEFT + point.seconds() / seconds * plot;
            gini.append(String.format(Locale.ROOT, "%.1f,%.1f ", x,
                    top + PANEL - Math.min(point.gini(), GINI_SCALE) / GINI_SCALE * PANEL));
            moved.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, top + PANEL - (double) point.moves() / moves * PANEL));
        }
        svg.append(String.format("<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"%s\"/>%n", gini));
        svg.append(String.format("<polyline fill=\"none\" stroke=\"#ff7f0e\" stroke-width=\"1.5\" points=\"%s\"/>%n", moved));
    }
}
