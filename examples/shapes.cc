// A C++ program with new and delete: a scene of shapes allocated one by one
// (many small short-lived objects), a long-lived index in a std::vector,
// and a scratch array per frame.

#include <cstdio>
#include <memory>
#include <vector>

struct Shape
{
  virtual ~Shape () = default;
  virtual double area () const = 0;
};

struct Square : Shape
{
  explicit Square (double side) : side (side)
  {
  }
  double
  area () const override
  {
    return side * side;
  }
  double side;
};

struct Circle : Shape
{
  explicit Circle (double radius) : radius (radius)
  {
  }
  double
  area () const override
  {
    return 3.14159 * radius * radius;
  }
  double radius;
};

static Shape *
make_shape (int i)
{
  if (i % 3 == 0)
    return new Circle (i * 0.5);
  return new Square (i * 0.25);
}

static double
render_frame (int frame)
{
  double *scratch = new double[256];
  double total = 0;
  for (int i = 0; i < 256; i++)
    scratch[i] = frame * 0.001 + i;
  for (int i = 0; i < 256; i += 16)
    total += scratch[i];
  delete[] scratch;
  return total;
}

int
main ()
{
  std::vector<Shape *> index;
  double total = 0;
  for (int i = 0; i < 20000; i++)
    {
      Shape *shape = make_shape (i);
      total += shape->area ();
      if (i % 100 == 0)
        index.push_back (shape);
      else
        delete shape;
    }
  for (int frame = 0; frame < 200; frame++)
    total += render_frame (frame);
  for (Shape *shape : index)
    total += shape->area ();
  for (Shape *shape : index)
    delete shape;
  std::printf ("total %.1f\n", total);
  return 0;
}
