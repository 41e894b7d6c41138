/* memprof flamegraph: the allocation contexts as folded stacks, the text
   format flamegraph.pl, inferno and speedscope read (one line per stack,
   "root;caller;...;leaf VALUE"), or drawn as a self-contained SVG flame
   graph.

   Stacks are named first and merged after, so that contexts that differ
   only in call positions (or in anything the chosen names leave out) are
   one line.  The SVG is laid out from the same merged stacks: a tree whose
   root, "all", spans the width, each frame as wide as its share of the
   metric, children ordered by name, callers below callees.  */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "emit.h"
#include "metrics.h"
#include "session.h"
#include "util.h"

static const char usage[]
    = "usage: memprof flamegraph [options] PROFILE...\n"
      "\n"
      "The allocation contexts of the profiles (merged) as folded stacks, "
      "one line\n"
      "per stack, root first (\"_start;main;parse;xmalloc 4096\"), for "
      "flamegraph.pl,\n"
      "inferno or speedscope; or, with --svg, as a flame graph of their "
      "own.\n"
      "Stacks that are the same once named are merged; lines are sorted; "
      "stacks\n"
      "whose value is 0 are left out.\n"
      "\n"
      "  --binary=FILE        symbolize with FILE's DWARF (the profiled "
      "program;\n"
      "                       give shared libraries too, each with "
      "--binary)\n"
      "  --no-libraries       do not look for the program's shared "
      "libraries\n"
      "  --metric=METRIC      the value of a stack (default bytes):\n"
      "                         bytes     bytes allocated (TotalSize)\n"
      "                         allocs    allocation calls (AllocCount)\n"
      "                         accesses  accesses counted "
      "(TotalAccessCount)\n"
      "                         waste     bytes never touched\n"
      "                         live      bytes still live at exit (needs "
      "the\n"
      "                                   side file, memprof.extra.PID)\n"
      "                         peak      bytes live at the heap's peak "
      "(needs a\n"
      "                                   version 3 side file)\n"
      "  --names=NAMES        demangled or linkage (mangled) frame names "
      "(default\n"
      "                       demangled)\n"
      "  --lines              NAME:LINE frames (the line of each call); "
      "default off\n"
      "  --format=folded|svg  to stdout (default folded)\n"
      "  --svg=FILE           write the SVG flame graph to FILE (- for "
      "stdout)\n"
      "  --width=PIXELS       of the SVG (default 1200)\n"
      "  --min-width=PERCENT  frames narrower than this share of the total "
      "are not\n"
      "                       drawn (default 0.1)\n"
      "  --title=TEXT         of the SVG (default \"Flame graph: \" and what "
      "the metric\n"
      "                       counts)\n"
      "\n"
      "A ';' in a name becomes ':', a control character '?'.\n"
      "\n"
      "Examples:\n"
      "  memprof flamegraph --binary=./app memprof.profraw.1234 | "
      "flamegraph.pl > a.svg\n"
      "  memprof flamegraph --binary=./app --metric=allocs "
      "--svg=allocs.svg \\\n"
      "      memprof.profraw.1234\n";

enum metric
{
  METRIC_BYTES,
  METRIC_ALLOCS,
  METRIC_ACCESSES,
  METRIC_WASTE,
  METRIC_LIVE,
  METRIC_PEAK
};

static const char *const metric_names[]
    = { "bytes", "allocs", "accesses", "waste", "live", "peak" };

/* What a value of each metric counts, in the SVG's tooltips.  */
static const char *const metric_units[] = { "bytes",
                                            "allocations",
                                            "accesses",
                                            "bytes never touched",
                                            "bytes live at exit",
                                            "bytes live at the peak" };

static const char *const metric_descriptions[]
    = { "bytes allocated (TotalSize)", "allocation calls (AllocCount)",
        "accesses (TotalAccessCount)", "bytes never touched",
        "bytes live at exit",          "bytes live at the heap's peak" };

struct options
{
  enum metric metric;
  bool linkage_names;
  bool lines;
  bool svg;
  const char *svg_path; /* NULL: stdout */
  long width;
  double min_width_percent;
  const char *title;
};

/* ---- Folded stacks ---- */

struct stack
{
  char *text; /* "root;...;leaf" */
  uint64_t value;
};

struct stacks
{
  struct stack *items;
  size_t count, capacity;
  uint64_t total;
};

/* Append NAME to BUFFER as one frame of a folded stack: ';' would split
   the frame and a line break the line, and invalid UTF-8 would make the
   SVG unreadable, so they are replaced.  */
static void
append_frame_name (struct buffer *buffer, const char *name)
{
  const unsigned char *p = (const unsigned char *) name;
  while (*p)
    {
      /* The length of the UTF-8 sequence at P, or 0 when invalid.  */
      size_t length = 0;
      if (*p < 0x80)
        length = 1;
      else if (*p >= 0xc2 && *p <= 0xdf)
        length = 2;
      else if (*p >= 0xe0 && *p <= 0xef)
        length = 3;
      else if (*p >= 0xf0 && *p <= 0xf4)
        length = 4;
      for (size_t i = 1; i < length; i++)
        if ((p[i] & 0xc0) != 0x80)
          length = 0;
      if (length == 1)
        {
          char c = (char) *p;
          if (c == ';')
            c = ':';
          else if (*p < 0x20 || *p == 0x7f)
            c = '?';
          buffer_append (buffer, &c, 1);
          p++;
        }
      else if (length == 0)
        {
          buffer_append (buffer, "?", 1);
          p++;
        }
      else
        {
          buffer_append (buffer, p, length);
          p += length;
        }
    }
}

static uint64_t
metric_value (const struct profile_context *context, enum metric metric,
              bool has_accesses, bool *unknown)
{
  switch (metric)
    {
    case METRIC_BYTES:
      return context->mib.total_size;
    case METRIC_ALLOCS:
      return context->mib.alloc_count;
    case METRIC_ACCESSES:
      return context->mib.total_access_count;
    case METRIC_WASTE:
      {
        struct metrics m;
        metrics_of (context, has_accesses, &m);
        *unknown = !m.waste_known;
        return m.waste_known ? (uint64_t) llround (m.waste) : 0;
      }
    case METRIC_LIVE:
      return context->extra.live_bytes;
    case METRIC_PEAK:
      return context->peak_bytes;
    }
  return 0;
}

static int
compare_stacks (const void *a, const void *b)
{
  return strcmp (((const struct stack *) a)->text,
                 ((const struct stack *) b)->text);
}

/* Refuse a metric the profile cannot tell.  */
static void
check_metric (const struct profile *profile, enum metric metric,
              bool has_accesses)
{
  if (profile->context_count == 0)
    return;
  if (metric == METRIC_ACCESSES && !has_accesses)
    die (EXIT_BAD_INPUT,
         "flamegraph: --metric=accesses: the profile holds no access "
         "counts (build the program with -fplugin=memprof.so to count "
         "them)");
  if (metric == METRIC_LIVE && profile->inputs_with_extra == 0)
    die (EXIT_BAD_INPUT,
         "flamegraph: --metric=live: no profile had its side file "
         "(memprof.extra.PID for memprof.profraw.PID, written by GCC "
         "MemProf's runtime next to the profile), which holds the bytes "
         "live at exit");
  if (metric == METRIC_PEAK && profile->peak.runs == 0)
    die (EXIT_BAD_INPUT,
         "flamegraph: --metric=peak: no profile tracked the heap's peak "
         "(it needs the version 3 side file of a runtime with peak=1)");
}

/* Name every context's frames, root first, and merge the stacks that are
   then the same.  */
static void
fold_stacks (struct session *session, const struct options *options,
             struct stacks *stacks)
{
  struct profile *profile = &session->profile;
  bool has_accesses = metrics_profile_has_accesses (profile);
  check_metric (profile, options->metric, has_accesses);
  struct view_frame *frames = NULL;
  size_t capacity = 0, unknown_count = 0;
  bool symbolized = false;
  struct buffer text = { 0 };
  memset (stacks, 0, sizeof *stacks);
  for (size_t c = 0; c < profile->context_count; c++)
    {
      const struct profile_context *context = &profile->contexts[c];
      bool unknown = false;
      uint64_t value
          = metric_value (context, options->metric, has_accesses, &unknown);
      unknown_count += unknown;
      if (value == 0)
        continue;
      size_t n = session_frames (session, context, false, &frames, &capacity);
      for (size_t i = 0; i < n && !symbolized; i++)
        symbolized = frames[i].function != NULL;
      text.length = 0;
      for (size_t i = n; i-- > 0;)
        {
          const struct view_frame *frame = &frames[i];
          if (i + 1 < n)
            buffer_append (&text, ";", 1);
          append_frame_name (&text, options->linkage_names && frame->function
                                        ? frame->function
                                        : frame->name);
          if (options->lines && frame->line != 0)
            buffer_printf (&text, ":%u", frame->line);
        }
      if (n == 0)
        buffer_printf (&text, "[no frames]");
      if (stacks->count == stacks->capacity)
        {
          stacks->capacity = stacks->capacity ? stacks->capacity * 2 : 256;
          stacks->items = xrealloc (stacks->items,
                                    stacks->capacity * sizeof *stacks->items);
        }
      buffer_append (&text, "", 1);
      stacks->items[stacks->count].text = xstrdup (text.data);
      stacks->items[stacks->count++].value = value;
      stacks->total += value;
    }
  free (frames);
  buffer_free (&text);
  if (!symbolized && stacks->count > 0)
    warn ("flamegraph: no frame is symbolized: give the profiled program "
          "with --binary=FILE");
  if (options->metric == METRIC_WASTE && unknown_count > 0)
    {
      if (unknown_count == profile->context_count)
        die (EXIT_BAD_INPUT,
             "flamegraph: --metric=waste: the profile cannot tell untouched "
             "bytes (it has no access counts, no histograms and no side "
             "file): build the program with -fplugin=memprof.so");
      warn ("flamegraph: %zu of %zu contexts cannot tell their untouched "
            "bytes; they count 0",
            unknown_count, profile->context_count);
    }

  qsort (stacks->items, stacks->count, sizeof *stacks->items, compare_stacks);
  size_t kept = 0;
  for (size_t i = 0; i < stacks->count; i++)
    if (kept > 0
        && strcmp (stacks->items[kept - 1].text, stacks->items[i].text) == 0)
      {
        stacks->items[kept - 1].value += stacks->items[i].value;
        free (stacks->items[i].text);
      }
    else
      stacks->items[kept++] = stacks->items[i];
  stacks->count = kept;
}

static void
free_stacks (struct stacks *stacks)
{
  for (size_t i = 0; i < stacks->count; i++)
    free (stacks->items[i].text);
  free (stacks->items);
}

/* ---- The tree the SVG draws ---- */

struct node
{
  const char *name;
  uint64_t value; /* of its stacks, its own and its callees' */
  uint32_t parent;
  uint32_t depth;
  uint32_t first_child; /* index in tree.children */
  uint32_t child_count;
  double x; /* left edge, as a share of the root's width */
};

struct tree
{
  struct node *nodes; /* nodes[0] is the root, "all" */
  size_t count, capacity;
  struct index_table index; /* by parent and name */
  uint32_t *children;       /* every node but the root, ordered by parent and
                         then name */
};

static uint64_t
hash_child (uint32_t parent, const char *name)
{
  return hash_mix (hash_bytes (name, strlen (name)) ^ parent);
}

struct child_key
{
  uint32_t parent;
  const char *name;
};

static uint64_t
node_hash (const void *owner, uint32_t index)
{
  const struct tree *tree = owner;
  return hash_child (tree->nodes[index].parent, tree->nodes[index].name);
}

static bool
node_equals (const void *owner, uint32_t index, const void *key)
{
  const struct tree *tree = owner;
  const struct child_key *k = key;
  return tree->nodes[index].parent == k->parent
         && strcmp (tree->nodes[index].name, k->name) == 0;
}

static uint32_t
tree_add (struct tree *tree, uint32_t parent, const char *name)
{
  if (tree->count == tree->capacity)
    {
      tree->capacity = tree->capacity ? tree->capacity * 2 : 1024;
      tree->nodes
          = xrealloc (tree->nodes, tree->capacity * sizeof *tree->nodes);
    }
  struct node *node = &tree->nodes[tree->count];
  memset (node, 0, sizeof *node);
  node->name = name;
  node->parent = parent;
  node->depth = tree->count == 0 ? 0 : tree->nodes[parent].depth + 1;
  return (uint32_t) tree->count++;
}

/* The child of PARENT named NAME, made on first sight.  */
static uint32_t
tree_child (struct tree *tree, uint32_t parent, const char *name)
{
  struct child_key key = { parent, name };
  index_table_reserve (&tree->index, tree->count, node_hash, tree);
  uint32_t *slot = index_table_slot (&tree->index, hash_child (parent, name),
                                     node_equals, tree, &key);
  if (*slot != 0)
    return *slot - 1;
  uint32_t index = tree_add (tree, parent, name);
  *slot = index + 1;
  return index;
}

static const struct tree *sorting_tree;

static int
compare_children (const void *a, const void *b)
{
  const struct node *x = &sorting_tree->nodes[*(const uint32_t *) a];
  const struct node *y = &sorting_tree->nodes[*(const uint32_t *) b];
  if (x->parent != y->parent)
    return x->parent < y->parent ? -1 : 1;
  return strcmp (x->name, y->name);
}

/* Build the tree of STACKS, whose texts it splits into frame names (and
   so keeps), and place every node.  */
static void
tree_build (struct tree *tree, struct stacks *stacks)
{
  memset (tree, 0, sizeof *tree);
  tree_add (tree, 0, "all");
  tree->nodes[0].value = stacks->total;
  for (size_t i = 0; i < stacks->count; i++)
    {
      uint32_t node = 0;
      char *name = stacks->items[i].text;
      for (;;)
        {
          char *end = strchr (name, ';');
          if (end != NULL)
            *end = '\0';
          node = tree_child (tree, node, name);
          tree->nodes[node].value += stacks->items[i].value;
          if (end == NULL)
            break;
          name = end + 1;
        }
    }

  /* Children in order of parent, then name; each node's slice of it.  */
  size_t count = tree->count - 1;
  tree->children = xmalloc ((count + 1) * sizeof *tree->children);
  for (size_t i = 0; i < count; i++)
    tree->children[i] = (uint32_t) i + 1;
  sorting_tree = tree;
  qsort (tree->children, count, sizeof *tree->children, compare_children);
  for (size_t i = count; i-- > 0;)
    {
      struct node *parent = &tree->nodes[tree->nodes[tree->children[i]].parent];
      parent->first_child = (uint32_t) i;
      parent->child_count++;
    }

  /* Left edges: parents come before their children in index order (a
     node is made after its parent), so one pass in index order places
     each node's children once the node itself is placed.  */
  double total = stacks->total > 0 ? (double) stacks->total : 1;
  tree->nodes[0].x = 0;
  for (size_t i = 0; i < tree->count; i++)
    {
      const struct node *node = &tree->nodes[i];
      double x = node->x;
      for (uint32_t c = 0; c < node->child_count; c++)
        {
          struct node *child
              = &tree->nodes[tree->children[node->first_child + c]];
          child->x = x;
          x += (double) child->value / total;
        }
    }
}

static void
tree_free (struct tree *tree)
{
  free (tree->nodes);
  index_table_free (&tree->index);
  free (tree->children);
}

/* ---- SVG ---- */

#define SVG_FRAME_HEIGHT 16
#define SVG_FONT_SIZE 12
/* An estimate of a character's width at SVG_FONT_SIZE, to shorten names
   that would not fit their frame; the text is clipped to its frame
   anyway.  */
#define SVG_CHAR_WIDTH 7.0
#define SVG_MARGIN 10
#define SVG_HEADER 56
/* Frames wider than this many pixels are drawn this much narrower, for a
   gap between neighbours.  */
#define SVG_GAP 0.5

/* A 32-bit FNV-1a hash of NAME: the colour of a frame depends on its name
   alone, so that one function has one colour in every graph.  */
static uint32_t
hash_name (const char *name)
{
  uint32_t hash = 2166136261u;
  for (const unsigned char *p = (const unsigned char *) name; *p; p++)
    hash = (hash ^ *p) * 16777619u;
  return hash;
}

/* Unsymbolized frames ("0x...", "[build id]+0x...") are drawn in greys
   and blues, named ones in reds, oranges and yellows.  */
static void
frame_colour (const char *name, bool root, char *out, size_t size)
{
  uint32_t hash = hash_name (name);
  if (root)
    snprintf (out, size, "rgb(200,200,205)");
  else if (name[0] == '[' || strncmp (name, "0x", 2) == 0)
    {
      unsigned grey = 150 + hash % 50;
      snprintf (out, size, "rgb(%u,%u,%u)", grey, grey + 10,
                grey + 30 + (hash >> 8) % 25);
    }
  else
    snprintf (out, size, "rgb(%u,%u,%u)", 205 + hash % 50,
              80 + (hash >> 8) % 150, 40 + (hash >> 16) % 45);
}

/* The text a frame WIDTH pixels wide shows of NAME, into OUT: all of it,
   or its start and "..", or nothing.  */
static void
fit_name (const char *name, double width, char *out, size_t size)
{
  long fits = (long) ((width - 6) / SVG_CHAR_WIDTH);
  size_t length = strlen (name);
  out[0] = '\0';
  if (fits < 3)
    return;
  if ((size_t) fits >= length)
    {
      snprintf (out, size, "%s", name);
      return;
    }
  size_t cut = (size_t) fits - 2;
  /* Not inside a UTF-8 sequence.  */
  while (cut > 0 && ((unsigned char) name[cut] & 0xc0) == 0x80)
    cut--;
  if (cut + 3 > size)
    cut = size - 3;
  memcpy (out, name, cut);
  memcpy (out + cut, "..", 3);
}

/* The click-to-zoom script: a frame clicked spans the width, its
   descendants widen with it, its ancestors span the width too and the
   rest hide; "Reset zoom" undoes it.  The SVG is complete without it.  */
static const char zoom_script[]
    = "(function () {\n"
      "  var left = %d, drawable = %.3f, charWidth = %.1f, gap = %.1f;\n"
      "  var frames = document.getElementById('memprof-frames');\n"
      "  var reset = document.getElementById('memprof-reset');\n"
      "  if (!frames || !reset) return;\n"
      "  var all = frames.getElementsByTagName('g');\n"
      "  function number(g, name) { return +g.getAttribute(name); }\n"
      "  function fit(name, width) {\n"
      "    var n = Math.floor((width - 6) / charWidth);\n"
      "    if (n < 3) return '';\n"
      "    return name.length <= n ? name : name.substring(0, n - 2) + "
      "'..';\n"
      "  }\n"
      "  function place(g, x, w) {\n"
      "    var px = left + x * drawable, pw = w * drawable;\n"
      "    var rect = g.getElementsByTagName('rect')[0];\n"
      "    var box = g.getElementsByTagName('svg')[0];\n"
      "    rect.setAttribute('x', px.toFixed(2));\n"
      "    rect.setAttribute('width', (pw > 2 ? pw - gap : pw).toFixed(2));\n"
      "    box.setAttribute('x', px.toFixed(2));\n"
      "    box.setAttribute('width', pw.toFixed(2));\n"
      "    box.getElementsByTagName('text')[0].textContent =\n"
      "      fit(g.getAttribute('data-name'), pw);\n"
      "    g.style.display = '';\n"
      "  }\n"
      "  function zoom(target) {\n"
      "    var x0 = number(target, 'data-x'), w0 = number(target, "
      "'data-w');\n"
      "    var d0 = number(target, 'data-depth'), eps = 1e-9;\n"
      "    for (var i = 0; i < all.length; i++) {\n"
      "      var g = all[i], x = number(g, 'data-x'), w = number(g, "
      "'data-w');\n"
      "      var d = number(g, 'data-depth');\n"
      "      var inside = x >= x0 - eps && x + w <= x0 + w0 + eps;\n"
      "      var around = x <= x0 + eps && x + w >= x0 + w0 - eps;\n"
      "      if (d < d0 && around) { place(g, 0, 1); g.style.opacity = "
      "'0.6'; }\n"
      "      else if (d >= d0 && inside) {\n"
      "        place(g, (x - x0) / w0, w / w0); g.style.opacity = '';\n"
      "      }\n"
      "      else g.style.display = 'none';\n"
      "    }\n"
      "    reset.style.display = '';\n"
      "  }\n"
      "  function unzoom() {\n"
      "    for (var i = 0; i < all.length; i++) {\n"
      "      place(all[i], number(all[i], 'data-x'), number(all[i], "
      "'data-w'));\n"
      "      all[i].style.opacity = '';\n"
      "    }\n"
      "    reset.style.display = 'none';\n"
      "  }\n"
      "  frames.addEventListener('click', function (event) {\n"
      "    var g = event.target;\n"
      "    while (g && g !== frames && g.nodeName !== 'g') g = "
      "g.parentNode;\n"
      "    if (g && g !== frames) zoom(g);\n"
      "  });\n"
      "  reset.addEventListener('click', unzoom);\n"
      "})();\n";

static void
write_svg (FILE *out, const struct tree *tree, const struct stacks *stacks,
           const struct options *options, const struct profile *profile)
{
  double width = (double) options->width;
  double drawable = width - 2 * SVG_MARGIN;
  double total = (double) stacks->total;
  double min_share = options->min_width_percent / 100;

  /* A node is drawn when it is wide enough; its children are narrower,
     so the depth of the drawing is that of its deepest wide node.  */
  uint32_t depth = 0;
  for (size_t i = 0; i < tree->count; i++)
    if (total > 0 && (double) tree->nodes[i].value / total >= min_share
        && tree->nodes[i].depth > depth)
      depth = tree->nodes[i].depth;
  double height = SVG_HEADER + (depth + 1) * SVG_FRAME_HEIGHT + SVG_MARGIN;

  fprintf (out,
           "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
           "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
           "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
           "font-family=\"Verdana, 'DejaVu Sans', sans-serif\" "
           "font-size=\"%d\">\n",
           width, height, width, height, SVG_FONT_SIZE);
  fprintf (out, "<style type=\"text/css\">\n"
                "#memprof-frames g { cursor: pointer; }\n"
                "#memprof-frames g:hover rect { stroke: #333; "
                "stroke-width: 0.7; }\n"
                "#memprof-frames text { pointer-events: none; }\n"
                "#memprof-reset { cursor: pointer; }\n"
                "</style>\n");
  fprintf (out,
           "<rect class=\"background\" x=\"0\" y=\"0\" width=\"%.0f\" "
           "height=\"%.0f\" fill=\"#f6f6f2\"/>\n",
           width, height);

  /* The header: the title, then what the widths measure.  */
  fprintf (out,
           "<text x=\"%.1f\" y=\"22\" text-anchor=\"middle\" "
           "font-size=\"17\">",
           width / 2);
  if (options->title != NULL)
    emit_html_text (out, options->title);
  else
    fprintf (out, "Flame graph: %s", metric_descriptions[options->metric]);
  fprintf (out,
           "</text>\n<text x=\"%.1f\" y=\"42\" text-anchor=\"middle\" "
           "fill=\"#555\">metric: %s = %s; %llu in all, %zu stack%s "
           "from %zu context%s",
           width / 2, metric_names[options->metric],
           metric_descriptions[options->metric],
           (unsigned long long) stacks->total, stacks->count,
           stacks->count == 1 ? "" : "s", profile->context_count,
           profile->context_count == 1 ? "" : "s");
  if (stacks->count == 0)
    fprintf (out, " (nothing to draw)");
  else
    fprintf (out, "; frames under %g%% not drawn; click one to zoom",
             options->min_width_percent);
  fprintf (out,
           "</text>\n<text id=\"memprof-reset\" x=\"%d\" y=\"22\" "
           "style=\"display:none\" fill=\"#06c\">Reset zoom</text>\n",
           SVG_MARGIN);

  fprintf (out, "<g id=\"memprof-frames\">\n");
  for (size_t i = 0; total > 0 && i < tree->count; i++)
    {
      const struct node *node = &tree->nodes[i];
      double share = (double) node->value / total;
      /* A node whose parent is not drawn is narrower than it.  */
      if (share < min_share)
        continue;
      double x = SVG_MARGIN + node->x * drawable;
      double w = share * drawable;
      double y = height - SVG_MARGIN - (node->depth + 1) * SVG_FRAME_HEIGHT;
      char colour[32], shown[512];
      frame_colour (node->name, i == 0, colour, sizeof colour);
      fit_name (node->name, w, shown, sizeof shown);
      fprintf (out,
               "<g data-x=\"%.9f\" data-w=\"%.9f\" data-depth=\"%u\" "
               "data-name=\"",
               node->x, share, node->depth);
      emit_html_text (out, node->name);
      fprintf (out, "\"><title>");
      emit_html_text (out, node->name);
      fprintf (out, ": %llu %s (%.2f%%)</title>",
               (unsigned long long) node->value, metric_units[options->metric],
               100 * share);
      fprintf (out,
               "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%d\" "
               "rx=\"2\" fill=\"%s\"/>",
               x, y, w > 2 ? w - SVG_GAP : w, SVG_FRAME_HEIGHT - 1, colour);
      /* A nested viewport clips the text to the frame.  */
      fprintf (out,
               "<svg x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%d\">"
               "<text x=\"3\" y=\"%d\">",
               x, y, w, SVG_FRAME_HEIGHT - 1, SVG_FRAME_HEIGHT - 4);
      emit_html_text (out, shown);
      fprintf (out, "</text></svg></g>\n");
    }
  fprintf (out, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n");
  fprintf (out, zoom_script, SVG_MARGIN, drawable, SVG_CHAR_WIDTH, SVG_GAP);
  fprintf (out, "]]></script>\n</svg>\n");
}

/* ---- The command ---- */

static void
parse_options (int argc, char **argv, struct session *session,
               struct options *options, char **inputs, int *input_count)
{
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      if (session_option (session, argc, argv, &i))
        continue;
      if (strncmp (arg, "--metric=", 9) == 0)
        {
          size_t m = 0;
          while (m < sizeof metric_names / sizeof metric_names[0]
                 && strcmp (arg + 9, metric_names[m]) != 0)
            m++;
          if (m == sizeof metric_names / sizeof metric_names[0])
            command_usage_error ("flamegraph",
                                 "unknown metric '%s' (bytes, "
                                 "allocs, accesses, waste, live or peak)",
                                 arg + 9);
          options->metric = (enum metric) m;
        }
      else if (strcmp (arg, "--names=demangled") == 0)
        options->linkage_names = false;
      else if (strcmp (arg, "--names=linkage") == 0)
        options->linkage_names = true;
      else if (strncmp (arg, "--names=", 8) == 0)
        command_usage_error ("flamegraph",
                             "unknown --names '%s' (demangled "
                             "or linkage)",
                             arg + 8);
      else if (strcmp (arg, "--lines") == 0)
        options->lines = true;
      else if (strncmp (arg, "--format=", 9) == 0)
        {
          static const char *const formats[] = { "folded", "svg", NULL };
          options->svg
              = command_choice ("flamegraph", "format", arg + 9, formats) == 1;
          options->svg_path = NULL;
        }
      else if (strncmp (arg, "--svg=", 6) == 0)
        {
          if (arg[6] == '\0')
            command_usage_error ("flamegraph", "--svg expects a file name");
          options->svg = true;
          options->svg_path = arg + 6;
        }
      else if (strncmp (arg, "--width=", 8) == 0)
        options->width = (long) command_number ("flamegraph", "--width",
                                                arg + 8, 200, 100000);
      else if (strncmp (arg, "--min-width=", 12) == 0)
        options->min_width_percent
            = command_number ("flamegraph", "--min-width", arg + 12, 0, 100);
      else if (strncmp (arg, "--title=", 8) == 0)
        options->title = arg + 8;
      else if (strcmp (arg, "--") == 0)
        {
          while (++i < argc)
            inputs[(*input_count)++] = argv[i];
        }
      else if (arg[0] == '-' && arg[1] != '\0')
        command_usage_error ("flamegraph", "unknown option '%s'", arg);
      else
        inputs[(*input_count)++] = argv[i];
    }
  if (*input_count == 0)
    command_usage_error ("flamegraph", "no profile given");
}

int
cmd_flamegraph (int argc, char **argv)
{
  if (command_help_requested (argc, argv))
    {
      fputs (usage, stdout);
      return 0;
    }
  struct session session;
  struct options options
      = { .metric = METRIC_BYTES, .width = 1200, .min_width_percent = 0.1 };
  session_init (&session);
  char **inputs = xcalloc ((size_t) argc, sizeof *inputs);
  int input_count = 0;
  parse_options (argc, argv, &session, &options, inputs, &input_count);

  session_load (&session, inputs, input_count, true);
  session_symbolize (&session);
  struct stacks stacks;
  fold_stacks (&session, &options, &stacks);

  if (!options.svg)
    for (size_t i = 0; i < stacks.count; i++)
      printf ("%s %llu\n", stacks.items[i].text,
              (unsigned long long) stacks.items[i].value);
  else
    {
      struct tree tree;
      tree_build (&tree, &stacks);
      char *data = NULL;
      size_t size = 0;
      FILE *out = open_memstream (&data, &size);
      if (out == NULL)
        die (1, "flamegraph: out of memory");
      write_svg (out, &tree, &stacks, &options, &session.profile);
      if (fclose (out) != 0)
        die (1, "flamegraph: out of memory");
      char error[1024];
      if (write_file_atomically (options.svg_path ? options.svg_path : "-",
                                 data, size, error, sizeof error)
          != 0)
        die (1, "flamegraph: %s", error);
      free (data);
      tree_free (&tree);
    }
  free_stacks (&stacks);
  free (inputs);
  session_free (&session);
  return 0;
}
