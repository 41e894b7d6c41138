/* churn (COUNT): COUNT blocks of 100 bytes, each written once and freed,
   all from one call site, so that a test finds their context by its leaf
   function, churn.  */
#ifndef PARITY_CHURN_H
#define PARITY_CHURN_H

#include <stdlib.h>

__attribute__ ((noipa)) static void
churn (int count)
{
  for (int i = 0; i < count; i++)
    {
      char *volatile block = malloc (100);
      block[0] = 1;
      free (block);
    }
}

#endif /* PARITY_CHURN_H */
