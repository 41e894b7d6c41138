/* The replay's CSV and SVG (docs/trace.md, "memprof replay").  */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "replay.h"
#include "util.h"

int
replay_write_csv (const char *path, const struct replay_sample *samples,
                  size_t sample_count, const struct replay_curve_point *curve,
                  size_t curve_count, char *error, size_t error_size)
{
  struct buffer out = { 0 };
  buffer_printf (&out, "series,x,value\n");
  for (size_t i = 0; i < sample_count; i++)
    buffer_printf (&out, "rss,%.3f,%" PRIu64 "\n", samples[i].ms,
                   samples[i].rss);
  for (size_t i = 0; i < sample_count; i++)
    buffer_printf (&out, "live,%.3f,%" PRIu64 "\n", samples[i].ms,
                   samples[i].live);
  for (size_t i = 0; i < curve_count; i++)
    buffer_printf (&out, "curve,%" PRIu64 ",%" PRIu64 "\n", curve[i].sequence,
                   curve[i].live);
  int status
      = write_file_atomically (path, out.data, out.length, error, error_size);
  buffer_free (&out);
  return status;
}

/* A round step for an axis spanning SPAN in about 5 ticks.  */
static double
tick_step (double span)
{
  double step = 1;
  if (span <= 0)
    return 1;
  while (step * 10 <= span)
    step *= 10;
  while (step > span)
    step /= 10;
  if (span / step < 2.5)
    step /= 4;
  else if (span / step < 5)
    step /= 2;
  return step;
}

int
replay_write_svg (const char *path, const char *title,
                  const struct replay_sample *samples, size_t sample_count,
                  uint64_t ideal_rss, char *error, size_t error_size)
{
  const double width = 900, height = 420, left = 90, right = 20, top = 50,
               bottom = 50;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  double max_ms = 1, max_bytes = (double) ideal_rss;
  struct buffer out = { 0 };
  char label[64];

  for (size_t i = 0; i < sample_count; i++)
    {
      if (samples[i].ms > max_ms)
        max_ms = samples[i].ms;
      if ((double) samples[i].rss > max_bytes)
        max_bytes = (double) samples[i].rss;
      if ((double) samples[i].live > max_bytes)
        max_bytes = (double) samples[i].live;
    }
  if (max_bytes < 1)
    max_bytes = 1;
  max_bytes *= 1.05;

#define X(ms) (left + (ms) / max_ms * plot_w)
#define Y(bytes) (top + plot_h - (double) (bytes) / max_bytes * plot_h)

  buffer_printf (&out,
                 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                 "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                 "font-family=\"sans-serif\" font-size=\"12\">\n"
                 "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                 "<text x=\"%.0f\" y=\"22\" font-size=\"15\">",
                 width, height, width, height, left);
  buffer_printf (&out, "memprof replay: ");
  buffer_append_markup (&out, title);
  buffer_printf (&out, "</text>\n");

  /* Axes, ticks and grid.  */
  double step = tick_step (max_bytes);
  for (double value = 0; value <= max_bytes; value += step)
    {
      buffer_printf (&out,
                     "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                     "stroke=\"#e0e0e0\"/>\n"
                     "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s"
                     "</text>\n",
                     left, Y (value), left + plot_w, Y (value), left - 6,
                     Y (value) + 4, format_bytes (value, label, sizeof label));
    }
  step = tick_step (max_ms);
  for (double value = 0; value <= max_ms; value += step)
    buffer_printf (&out,
                   "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                   "stroke=\"#e0e0e0\"/>\n"
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g"
                   "</text>\n",
                   X (value), top, X (value), top + plot_h, X (value),
                   top + plot_h + 16, value / 1000);
  buffer_printf (&out,
                 "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                 "fill=\"none\" stroke=\"#444\"/>\n"
                 "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time "
                 "(s)</text>\n",
                 left, top, plot_w, plot_h, left + plot_w / 2, height - 12);

  /* The ideal RSS, then the two series.  */
  buffer_printf (&out,
                 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                 "stroke=\"#2a9d34\" stroke-dasharray=\"6 4\"/>\n",
                 left, Y (ideal_rss), left + plot_w, Y (ideal_rss));
  static const struct
  {
    const char *name, *colour;
  } series[2] = { { "RSS (anonymous)", "#1f5fbf" },
                  { "live requested bytes", "#e07b00" } };
  for (int s = 0; s < 2; s++)
    {
      buffer_printf (&out,
                     "<polyline fill=\"none\" stroke=\"%s\" "
                     "stroke-width=\"1.5\" points=\"",
                     series[s].colour);
      for (size_t i = 0; i < sample_count; i++)
        buffer_printf (&out, "%.1f,%.1f ", X (samples[i].ms),
                       Y (s == 0 ? samples[i].rss : samples[i].live));
      buffer_printf (&out, "\"/>\n");
    }
  /* The legend.  */
  double legend_x = left + 10;
  for (int s = 0; s < 3; s++)
    {
      const char *name = s < 2 ? series[s].name : "ideal RSS (peak live)";
      const char *colour = s < 2 ? series[s].colour : "#2a9d34";
      buffer_printf (&out,
                     "<line x1=\"%.1f\" y1=\"38\" x2=\"%.1f\" y2=\"38\" "
                     "stroke=\"%s\" stroke-width=\"3\"/>\n"
                     "<text x=\"%.1f\" y=\"42\">%s</text>\n",
                     legend_x, legend_x + 20, colour, legend_x + 25, name);
      legend_x += 60 + 7.0 * (double) strlen (name);
    }
  buffer_printf (&out, "</svg>\n");
#undef X
#undef Y
  int status
      = write_file_atomically (path, out.data, out.length, error, error_size);
  buffer_free (&out);
  return status;
}
