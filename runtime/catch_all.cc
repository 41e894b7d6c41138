/* The one C++ function of the runtime: call a function and turn whatever
   it throws into a NULL result.  The nothrow forms of operator new need
   it (new_delete.c): like libstdc++'s, they call the throwing form (a
   program's replacement, or a new-handler that throws std::bad_alloc)
   and return NULL when it throws -- which C cannot catch.

   libmemprof needs no C++ runtime of its own: the references that
   `catch (...)' makes to libstdc++ (the personality routine, the catch
   bookkeeping) are weak.  Only a C++ exception ever reaches the handler,
   and a C++ exception means libstdc++ is loaded and resolves them.  */

__asm__(".weak __gxx_personality_v0\n"
        "\t.weak __cxa_begin_catch\n"
        "\t.weak __cxa_end_catch");

extern "C" __attribute__ ((visibility ("hidden"))) void *
call_catching (void *(*function) (void *), void *argument)
{
  try
    {
      return function (argument);
    }
  catch (...)
    {
      return nullptr;
    }
}
