// A C++ container-heavy program: a std::map of std::string to
// std::vector, an std::unordered_map of counters, std::string
// concatenation, and std::sort, round after round.  Argument: scale.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

int
main (int argc, char **argv)
{
  double scale = argc > 1 ? std::atof (argv[1]) : 1.0;
  unsigned long state = 99;
  unsigned long checksum = 0;
  for (long round = 0; round < (long) (220 * scale); round++)
    {
      std::map<std::string, std::vector<int> > index;
      std::unordered_map<std::string, long> counts;
      for (int i = 0; i < 20000; i++)
        {
          state = state * 6364136223846793005UL + 1442695040888963407UL;
          std::string key = "k" + std::to_string ((state >> 33) % 3000);
          index[key].push_back (i);
          counts[key] += i;
        }
      std::vector<std::string> keys;
      for (const auto &entry : index)
        keys.push_back (entry.first + ":"
                        + std::to_string (entry.second.size ()));
      std::sort (keys.begin (), keys.end (),
                 [] (const std::string &a, const std::string &b) {
                   return a.size () != b.size () ? a.size () < b.size ()
                                                 : a < b;
                 });
      checksum += keys.size () + keys.front ().size () + counts.size ();
    }
  std::printf ("containers %lu\n", checksum);
  return 0;
}
