/* A library built without the plugin and with -fomit-frame-pointer: it
   calls the program back from a few frames deep.  */
static void
walk_level (int depth, int value, void (*visit) (int))
{
  volatile int here = value;
  if (depth > 0)
    walk_level (depth - 1, value * 3 + 1, visit);
  visit (here % 97);
}

void
library_walk (int depth, void (*visit) (int))
{
  for (int i = 0; i < 20; i++)
    walk_level (depth, i, visit);
}
